import type { Response } from 'supertest';
import { SessionTokens } from '../src/nodes/session-token';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';
import { laneCount, twoNodes } from './harness/lanes';
import { subscribedUser } from './harness/nodes';
import { seen as seenByClient } from './harness/seen';

/**
 * POST /internal/validate is answered by a lane in front of the general pipeline when its request
 * is plain JSON (`application/json`); `application/vnd.agent+json`, which the body parser reads
 * too, goes the general way. Every request, good or bad, must be answered the same either way, and
 * the lane must answer those the route accepts (its metric counts them): else the equivalence
 * would hold with no lane at all.
 */
describe('internal: the validate lane answers as the general pipeline does', () => {
  const LANE = 'application/json';
  /** Hex digits in a UUID's shape, but of no UUID version: the DTO's `IsUUID('all')` refuses it. */
  const NO_VERSION = 'aaaaaaaa-aaaa-0aaa-0aaa-aaaaaaaaaaaa';
  const GENERAL = 'application/vnd.agent+json';
  let t: TestApp;
  let nodeA: string;
  let secretA: string;
  let secretB: string;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp({ BODY_LIMIT: '2kb' });
    ({ nodeA, secretA, secretB } = await twoNodes(t, await newUser(t, 'owner')));
    userId = (await subscribedUser(t)).user.id;
  });
  afterAll(() => t.close());

  const freshToken = (): string =>
    t.app.get(SessionTokens).issue(userId, nodeA, Math.floor(Date.now() / 1000) + 60);

  async function send(type: string, body: string, secret: string | null): Promise<Response> {
    const request = t.http().post('/api/v1/internal/validate').set('Content-Type', type);
    if (secret !== null) request.set('X-Internal-Secret', secret);
    return request.send(body);
  }

  const laneAnswers = (): Promise<number> => laneCount(t, 'vpn_validate_lane_answers_total');

  /** Sends `body` as `type` and returns the answer and how many requests the lane answered. */
  async function sendCounted(type: string, body: string, secret: string | null) {
    const before = await laneAnswers();
    const response = await send(type, body, secret);
    return { response, byLane: (await laneAnswers()) - before };
  }

  /** What a client can tell of an answer, and whether the connection is kept. */
  const seen = (response: Response) => seenByClient(response, ['connection']);

  /** The requests the route accepts: the lane answers these itself, the others go on. */
  const ACCEPTED = [
    'a fresh token',
    'the node id in capitals, INTERNAL_SECRET',
    'a bad token',
    'the fields the other way round',
    'an empty token',
  ];
  const cases: [name: string, body: () => string, secret: () => string | null][] = [
    ['a fresh token', () => JSON.stringify({ token: freshToken(), node_id: nodeA }), () => secretA],
    [
      'the node id in capitals, INTERNAL_SECRET',
      () => JSON.stringify({ token: freshToken(), node_id: nodeA.toUpperCase() }),
      () => t.settings.internalSecret,
    ],
    ['a bad token', () => JSON.stringify({ token: 'garbage', node_id: nodeA }), () => secretA],
    [
      'the fields the other way round',
      () => JSON.stringify({ node_id: nodeA, token: freshToken() }),
      () => secretA,
    ],
    ['an empty token', () => JSON.stringify({ token: '', node_id: nodeA }), () => secretA],
    ['a null token', () => JSON.stringify({ token: null, node_id: nodeA }), () => secretA],
    ['malformed JSON', () => '{"token": ', () => secretA],
    ['a bare number', () => '5', () => secretA],
    ['an array', () => '[]', () => secretA],
    ['only spaces', () => '   ', () => secretA],
    ['a missing field', () => JSON.stringify({ token: freshToken() }), () => secretA],
    [
      'an unknown field',
      () => JSON.stringify({ token: freshToken(), node_id: nodeA, extra: 1 }),
      () => secretA,
    ],
    [
      'a node id that is no UUID',
      () => JSON.stringify({ token: 'x', node_id: 'a' }),
      () => secretA,
    ],
    [
      'a NUL in the token',
      () => JSON.stringify({ token: 'a\u0000b', node_id: nodeA }),
      () => secretA,
    ],
    ['a __proto__ key', () => `{"token":"x","node_id":"${nodeA}","__proto__":{}}`, () => secretA],
    ['a token as a number', () => JSON.stringify({ token: 1, node_id: nodeA }), () => secretA],
    [
      'another node speaking',
      () => JSON.stringify({ token: freshToken(), node_id: nodeA }),
      () => secretB,
    ],
    ['a wrong secret', () => JSON.stringify({ token: freshToken(), node_id: nodeA }), () => 'nope'],
    ['no secret', () => JSON.stringify({ token: freshToken(), node_id: nodeA }), () => null],
    [
      'a body over BODY_LIMIT',
      () => JSON.stringify({ token: 'x'.repeat(3000), node_id: nodeA }),
      () => secretA,
    ],
    [
      'a node id of no UUID version, INTERNAL_SECRET',
      () => JSON.stringify({ token: freshToken(), node_id: NO_VERSION }),
      () => t.settings.internalSecret,
    ],
  ];

  it.each(cases)('%s', async (name, body, secret) => {
    const lane = await sendCounted(LANE, body(), secret());
    const general = await sendCounted(GENERAL, body(), secret());
    expect(seen(lane.response)).toEqual(seen(general.response));
    expect(lane.response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(lane.byLane).toBe(ACCEPTED.includes(name) ? 1 : 0);
    expect(general.byLane).toBe(0);
  });

  it("leaves a page's request (a Referer, no Origin) to the origin check", async () => {
    const body = JSON.stringify({ token: freshToken(), node_id: nodeA });
    const before = await laneAnswers();
    const fromPage = await t
      .http()
      .post('/api/v1/internal/validate')
      .set('Content-Type', LANE)
      .set('X-Internal-Secret', secretA)
      .set('Referer', 'https://elsewhere.example/page')
      .send(body);
    expect([fromPage.status, fromPage.body.code]).toEqual([403, 'ORIGIN_REJECTED']);
    expect(await laneAnswers()).toBe(before);
  });

  it('a token is spent once whichever way it comes', async () => {
    const body = JSON.stringify({ token: freshToken(), node_id: nodeA });
    const before = await laneAnswers();
    const answers = await Promise.all([
      send(LANE, body, secretA),
      send(GENERAL, body, secretA),
      send(LANE, body, secretA),
      send(GENERAL, body, secretA),
    ]);
    expect((await laneAnswers()) - before).toBe(2);
    const valid = answers.filter((answer) => (answer.body as { valid?: boolean }).valid === true);
    expect(valid).toHaveLength(1);
    for (const answer of answers) expect(answer.status).toBe(200);
  });
});
