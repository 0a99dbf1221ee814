import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';
import { laneCount, twoNodes } from './harness/lanes';
import { subscribedUser } from './harness/nodes';
import { seen as seenByClient } from './harness/seen';

/**
 * POST /internal/traffic is answered by a lane as soon as the body parser has read its report
 * plainly (`application/json`); `application/vnd.agent+json`, which the body parser reads too, goes
 * the general way. Every report, good or bad, must be answered the same either way (each sent with
 * its own report id, so that both are new), and the lane must answer those the route accepts (its
 * metric counts them): else the equivalence would hold with no lane at all.
 */
describe('internal: the traffic lane answers as the general pipeline does', () => {
  const PATH = '/api/v1/internal/traffic';
  const LANE = 'application/json';
  const GENERAL = 'application/vnd.agent+json';
  let t: TestApp;
  let nodeA: string;
  let secretA: string;
  let secretB: string;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp();
    ({ nodeA, secretA, secretB } = await twoNodes(t, await newUser(t, 'owner')));
    userId = (await subscribedUser(t)).user.id;
  });
  afterAll(() => t.close());

  function send(
    type: string,
    body: string,
    secret: string | null,
    extra: Record<string, string> = {},
  ): Promise<Response> {
    const request = t.http().post(PATH).set('Content-Type', type).set(extra);
    if (secret !== null) request.set('X-Internal-Secret', secret);
    return request.send(body);
  }

  const laneAnswers = (): Promise<number> => laneCount(t, 'vpn_traffic_lane_answers_total');

  /** What a client can tell of an answer, and whether the connection is kept. */
  const seen = (response: Response) => seenByClient(response, ['connection']);

  /** A report of `node` with a fresh id, of one entry of `user` unless `entries` are given. */
  const report = (node: string, entries?: unknown[]): string =>
    JSON.stringify({
      node_id: node,
      report_id: randomUUID(),
      entries: entries ?? [{ user_id: userId, bytes_up: 10, bytes_down: 20 }],
    });

  /** The reports the route accepts: the lane answers these itself, the others go on. */
  const ACCEPTED = [
    'a report of its own node',
    'INTERNAL_SECRET',
    'the node id in capitals',
    'no entries',
    'an unknown user',
    'devices and connections',
  ];
  type Case = [name: string, body: () => string, secret: () => string | null];
  const cases: Case[] = [
    ['a report of its own node', () => report(nodeA), () => secretA],
    ['INTERNAL_SECRET', () => report(nodeA), () => t.settings.internalSecret],
    ['the node id in capitals', () => report(nodeA.toUpperCase()), () => secretA],
    ['no entries', () => report(nodeA, []), () => secretA],
    [
      'an unknown user',
      () => report(nodeA, [{ user_id: randomUUID(), bytes_up: 1, bytes_down: 2 }]),
      () => secretA,
    ],
    [
      'devices and connections',
      () =>
        JSON.stringify({
          node_id: nodeA,
          report_id: randomUUID(),
          entries: [{ user_id: userId, bytes_up: 1, bytes_down: 2, devices: [] }],
          online: [],
        }),
      () => secretA,
    ],
    [
      'an unknown node, INTERNAL_SECRET',
      () => report(randomUUID()),
      () => t.settings.internalSecret,
    ],
    ['another node speaking', () => report(nodeA), () => secretB],
    ['a wrong secret', () => report(nodeA), () => 'nope'],
    ['no secret', () => report(nodeA), () => null],
    [
      'a negative count',
      () => report(nodeA, [{ user_id: userId, bytes_up: -1, bytes_down: 2 }]),
      () => secretA,
    ],
    [
      'an unknown field',
      () => JSON.stringify({ ...JSON.parse(report(nodeA)), extra: 1 }),
      () => secretA,
    ],
    ['malformed JSON', () => '{"node_id": ', () => secretA],
  ];

  it.each(cases)('%s', async (name, body, secret) => {
    const before = await laneAnswers();
    const lane = await send(LANE, body(), secret());
    const byLane = (await laneAnswers()) - before;
    const general = await send(GENERAL, body(), secret());
    expect(seen(lane)).toEqual(seen(general));
    expect(byLane).toBe(ACCEPTED.includes(name) ? 1 : 0);
    expect((await laneAnswers()) - before - byLane).toBe(0);
  });

  it('answers a repeated report as not applied, and counts its bytes once', async () => {
    const body = report(nodeA);
    const first = await send(LANE, body, secretA);
    const again = await send(LANE, body, secretA);
    expect([first.status, first.body.applied]).toEqual([200, true]);
    expect([again.status, again.body.applied]).toEqual([200, false]);
  });

  it("leaves a browser, a page's request and another method to the general pipeline", async () => {
    const before = await laneAnswers();
    const fromBrowser = await send(LANE, report(nodeA), secretA, {
      Origin: 'https://elsewhere.example',
    });
    // The origin check refuses a write from an origin it does not trust, as before.
    expect(fromBrowser.status).toBe(403);
    // Without an Origin it reads the Referer.
    const fromPage = await send(LANE, report(nodeA), secretA, {
      Referer: 'https://elsewhere.example/page',
    });
    expect([fromPage.status, fromPage.body.code]).toEqual([403, 'ORIGIN_REJECTED']);
    const put = await t
      .http()
      .put(PATH)
      .set('Content-Type', LANE)
      .set('X-Internal-Secret', secretA)
      .send(report(nodeA));
    expect(put.status).toBe(404);
    expect(await laneAnswers()).toBe(before);
  });
});
