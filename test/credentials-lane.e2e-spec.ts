import type { Response } from 'supertest';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';
import { laneCount, twoNodes } from './harness/lanes';
import { subscribedUser } from './harness/nodes';
import { seen as seenByClient } from './harness/seen';

/**
 * GET /internal/credentials is answered by a lane in front of the general pipeline when its query
 * is exactly the agent's (`?node_id=…&since=…`); the same two fields the other way round go the
 * general way. Every request, good or bad, must be answered the same either way, and the lane must
 * answer those the route accepts (its metric counts them): else the equivalence would hold with
 * no lane at all.
 */
describe('internal: the credentials lane answers as the general pipeline does', () => {
  const PATH = '/api/v1/internal/credentials';
  let t: TestApp;
  let nodeA: string;
  let secretA: string;
  let secretB: string;
  let version: number;

  beforeAll(async () => {
    t = await startTestApp();
    const owner = await newUser(t, 'owner');
    let nodeB: string;
    ({ nodeA, nodeB, secretA, secretB } = await twoNodes(t, owner));
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = ANY($1::uuid[])`,
      [[nodeA, nodeB]],
    );
    // A device whose id node A carries, so that its set is not empty.
    const user = await subscribedUser(t);
    await t.http().post('/api/v1/users/me/devices').set(user.bearer).send({ name: 'Phone' });
    version = (await ask(`?node_id=${nodeA}&since=0`, secretA)).body.version as number;
    expect((await ask(`?node_id=${nodeA}&since=0`, secretA)).body.upsert).toHaveLength(1);
  });
  afterAll(() => t.close());

  function ask(query: string, secret: string | null, origin?: string): Promise<Response> {
    const request = t.http().get(`${PATH}${query}`);
    if (secret !== null) request.set('X-Internal-Secret', secret);
    if (origin !== undefined) request.set('Origin', origin);
    return request;
  }

  const laneAnswers = (): Promise<number> => laneCount(t, 'vpn_credentials_lane_answers_total');

  /** What a client can tell of an answer, and whether the connection is kept. */
  const seen = (response: Response) => seenByClient(response, ['connection']);

  /** The requests the route accepts: the lane answers these itself, the others go on. */
  const ACCEPTED = [
    'the whole set',
    'what changed since the version it has',
    'an older version',
    'the node id in capitals',
    'INTERNAL_SECRET',
    'a version from the future',
    'a version with leading zeros',
  ];
  type Case = [
    name: string,
    nodeId: () => string,
    since: () => string,
    secret: () => string | null,
  ];
  const cases: Case[] = [
    ['the whole set', () => nodeA, () => '0', () => secretA],
    ['what changed since the version it has', () => nodeA, () => String(version), () => secretA],
    ['an older version', () => nodeA, () => String(version - 1), () => secretA],
    ['the node id in capitals', () => nodeA.toUpperCase(), () => '0', () => secretA],
    ['INTERNAL_SECRET', () => nodeA, () => '0', () => t.settings.internalSecret],
    ['a version from the future', () => nodeA, () => String(version + 1000), () => secretA],
    ['a version with leading zeros', () => nodeA, () => `000${version}`, () => secretA],
    ['a version past 2^53', () => nodeA, () => '9007199254740992', () => secretA],
    ['a negative version', () => nodeA, () => '-1', () => secretA],
    ['a fraction', () => nodeA, () => '1.5', () => secretA],
    ['no version', () => nodeA, () => '', () => secretA],
    ['a node id that is no UUID', () => 'a', () => '0', () => secretA],
    [
      'a node id of no UUID version, INTERNAL_SECRET',
      // Hex digits in a UUID's shape, but of no version: the DTO's `IsUUID('all')` refuses it.
      () => 'aaaaaaaa-aaaa-0aaa-0aaa-aaaaaaaaaaaa',
      () => '0',
      () => t.settings.internalSecret,
    ],
    [
      'a node id that is no UUID, INTERNAL_SECRET',
      () => 'a',
      () => '0',
      () => t.settings.internalSecret,
    ],
    ['another node speaking', () => nodeA, () => '0', () => secretB],
    ['a wrong secret', () => nodeA, () => '0', () => 'nope'],
    ['no secret', () => nodeA, () => '0', () => null],
  ];

  it.each(cases)('%s', async (name, nodeId, since, secret) => {
    const before = await laneAnswers();
    const lane = await ask(`?node_id=${nodeId()}&since=${since()}`, secret());
    const byLane = (await laneAnswers()) - before;
    const general = await ask(`?since=${since()}&node_id=${nodeId()}`, secret());
    expect(seen(lane)).toEqual(seen(general));
    expect(byLane).toBe(ACCEPTED.includes(name) ? 1 : 0);
    expect((await laneAnswers()) - before - byLane).toBe(0);
  });

  it('leaves a browser, another method, a query with more and an encoding to the general pipeline', async () => {
    const before = await laneAnswers();
    const agent = `?node_id=${nodeA}&since=0`;
    const fromBrowser = await ask(agent, secretA, 'https://elsewhere.example');
    expect(fromBrowser.status).toBe(200);
    const more = await ask(`${agent}&extra=1`, secretA);
    expect(more.status).toBe(400);
    const posted = await t.http().post(`${PATH}${agent}`).set('X-Internal-Secret', secretA);
    expect(posted.status).toBe(404);
    const encoded = await t
      .http()
      .get(`${PATH}${agent}`)
      .set('X-Internal-Secret', secretA)
      .set('Content-Encoding', 'gzip');
    expect(encoded.status).toBe(415);
    expect(await laneAnswers()).toBe(before);
  });
});
