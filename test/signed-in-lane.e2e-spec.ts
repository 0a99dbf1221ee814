import jwt from 'jsonwebtoken';
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { accessTokenKey } from '../src/auth/sessions.service';
import { Metrics } from '../src/metrics/metrics.service';
import { SessionTokens } from '../src/nodes/session-token';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { parseMetrics } from './harness/metrics';
import { createNode, subscribedUser } from './harness/nodes';
import { seen as seenByClient } from './harness/seen';

/**
 * GET /users/me and GET /nodes/routing are answered by a lane ahead of the general pipeline when
 * the request is a plain GET of the exact path; the same path with a query goes the general way.
 * Every request, good or bad, must be answered the same either way, and the lane must answer the
 * ones the routes accept (its metric counts them): else the equivalence would hold with no lane.
 */
describe('the signed-in lane answers as the general pipeline does', () => {
  const ME = '/api/v1/users/me';
  const ROUTING = '/api/v1/nodes/routing';
  let t: TestApp;
  let subscriber: TestUser;
  let unsubscribed: TestUser;
  let blocked: TestUser;
  let signedOut: TestUser;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    const nodes = [
      (await createNode(t, owner, { name: 'lane-a' })).id,
      (await createNode(t, owner, { name: 'lane-b' })).id,
    ];
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = ANY($1::uuid[])`,
      [nodes],
    );
    subscriber = await subscribedUser(t);
    unsubscribed = await newUser(t, 'seed');
    blocked = await subscribedUser(t);
    await t.dataSource.query('UPDATE users SET blocked_at = now() WHERE id = $1', [
      blocked.user.id,
    ]);
    signedOut = await subscribedUser(t);
    const logout = await t.http().post('/api/v1/auth/logout').set(signedOut.bearer);
    expect(logout.status).toBe(204);
  });
  afterAll(() => t.close());

  /** An access token signed with the service's key, with these claims. */
  const signed = (claims: Record<string, unknown>, algorithm: jwt.Algorithm = 'HS256'): string =>
    jwt.sign(claims, accessTokenKey(t.settings), { algorithm, noTimestamp: true });
  const now = (): number => Math.floor(Date.now() / 1000);

  const laneAnswers = async (route: string): Promise<number> => {
    const text = await t.app.get(Metrics).registry.metrics();
    const sample = parseMetrics(text).find(
      (line) => line.name === 'vpn_signed_in_lane_answers_total' && line.labels.route === route,
    );
    return sample?.value ?? 0;
  };

  /** What a client can tell of an answer; the nodes' session tokens differ each time. */
  function seen(response: Response) {
    const answer = seenByClient(response, [
      'x-frame-options',
      'vary',
      'access-control-allow-origin',
      'set-cookie',
    ]);
    const { body } = answer;
    if (!Array.isArray(body)) return answer;
    const entries = body as Record<string, unknown>[];
    return { ...answer, body: entries.map((entry) => ({ ...entry, session_token: 'issued' })) };
  }

  /** The requests the routes accept or refuse themselves (402 without a subscription, say). */
  const ACCEPTED = [
    'a subscriber, by cookie',
    'a subscriber, by bearer',
    'a staff account',
    'an account without a subscription',
  ];
  const cases: [name: string, headers: () => Record<string, string>][] = [
    ['a subscriber, by cookie', () => ({ Cookie: subscriber.cookie })],
    ['a subscriber, by bearer', () => subscriber.bearer],
    ['a staff account', () => owner.bearer],
    ['an account without a subscription', () => unsubscribed.bearer],
    ['a blocked account', () => blocked.bearer],
    ['a signed-out session', () => signedOut.bearer],
    ['no session', () => ({})],
    ['a declared body encoding', () => ({ ...subscriber.bearer, 'Content-Encoding': 'gzip' })],
    [
      'a malformed bearer header beside a good cookie',
      () => ({ Authorization: 'Bearer', Cookie: subscriber.cookie }),
    ],
    ['a token that is no JWT', () => ({ Authorization: 'Bearer not.a.token' })],
    ['a cookie holding JSON', () => ({ Cookie: 'access_token=j:{"a":1}' })],
    [
      'an expired token',
      () => ({
        Authorization: `Bearer ${signed({ sub: subscriber.user.id, sid: subscriber.session.sessionId, iat: now() - 7200, exp: now() - 3600 })}`,
      }),
    ],
    [
      'a token without an expiry',
      () => ({
        Authorization: `Bearer ${signed({ sub: subscriber.user.id, sid: subscriber.session.sessionId, iat: now() })}`,
      }),
    ],
    [
      'a token of an unknown session',
      () => ({
        Authorization: `Bearer ${signed({ sub: subscriber.user.id, sid: randomUUID(), iat: now(), exp: now() + 600 })}`,
      }),
    ],
    [
      'a token signed with another key',
      () => ({
        Authorization: `Bearer ${jwt.sign({ sub: subscriber.user.id, sid: subscriber.session.sessionId }, 'another key', { expiresIn: 600 })}`,
      }),
    ],
    [
      'a browser naming another origin',
      () => ({ Cookie: subscriber.cookie, Origin: 'https://elsewhere.example' }),
    ],
    ['a browser naming a trusted origin', () => ({ ...subscriber.cookieHeaders })],
  ];

  describe.each([ME, ROUTING])('%s', (path) => {
    it.each(cases)('%s', async (name, headers) => {
      const before = await laneAnswers(path);
      const lane = await t.http().get(path).set(headers());
      const afterLane = await laneAnswers(path);
      const general = await t.http().get(`${path}?by=general`).set(headers());
      expect(seen(lane)).toEqual(seen(general));
      expect(afterLane - before).toBe(ACCEPTED.includes(name) && !('Origin' in headers()) ? 1 : 0);
      expect((await laneAnswers(path)) - afterLane).toBe(0);
    });
  });

  it('answers a subscriber the nodes, each with a token the nodes accept', async () => {
    const response = await t.http().get(ROUTING).set(subscriber.bearer).expect(200);
    const entries = response.body as { node_id: string; session_token: string }[];
    expect(entries.map((entry) => entry.node_id)).toHaveLength(2);
    const tokens = t.app.get(SessionTokens);
    for (const entry of entries) {
      expect(tokens.verify(entry.session_token)).toEqual(
        expect.objectContaining({ userId: subscriber.user.id, nodeId: entry.node_id }),
      );
    }
  });

  it.each([ME, ROUTING])('%s with a body is refused alike, by the general way', async (path) => {
    const before = await laneAnswers(path);
    const lane = await t.http().get(path).set(subscriber.bearer).send({ stray: 1 });
    const general = await t
      .http()
      .get(`${path}?by=general`)
      .set(subscriber.bearer)
      .send({ stray: 1 });
    expect(seen(lane)).toEqual(seen(general));
    expect(lane.status).toBe(400);
    expect(await laneAnswers(path)).toBe(before);
  });

  it('a HEAD request and a POST go the general way', async () => {
    const before = await laneAnswers(ME);
    await t.http().head(ME).set(subscriber.bearer).expect(200);
    const post = await t.http().post(ME).set(subscriber.bearer);
    expect(post.status).toBe(404);
    expect(await laneAnswers(ME)).toBe(before);
  });
});
