import { InternalRepository } from '../src/internal/internal.repository';
import { InternalService } from '../src/internal/internal.service';
import { SessionTokens } from '../src/nodes/session-token';
import { startTestApp, type TestApp } from './harness/app';
import { slowedDown } from './harness/slowed';
import { newUser, type TestUser } from './harness/factories';
import { createNode, subscribedUser } from './harness/nodes';

describe('internal: session tokens validate once', () => {
  let t: TestApp;
  let owner: TestUser;
  let nodeA: string;
  let nodeB: string;
  let secret: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    secret = { 'X-Internal-Secret': t.settings.internalSecret };
    nodeA = (await createNode(t, owner, { name: 'a' })).id;
    nodeB = (await createNode(t, owner, { name: 'b' })).id;
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = ANY($1::uuid[])`,
      [[nodeA, nodeB]],
    );
  });
  afterAll(() => t.close());

  /** The user's tokens from GET /nodes/routing, by node id. */
  async function routingTokens(user: TestUser): Promise<Map<string, string>> {
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const entries = response.body as { node_id: string; session_token: string }[];
    return new Map(entries.map((entry) => [entry.node_id, entry.session_token]));
  }

  const validate = (token: unknown, nodeId: string) =>
    t.http().post('/api/v1/internal/validate').set(secret).send({ token, node_id: nodeId });

  it('a token from routing validates once, then is used', async () => {
    const user = await subscribedUser(t);
    const token = (await routingTokens(user)).get(nodeA)!;
    const first = await validate(token, nodeA);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      valid: true,
      user_id: user.user.id,
      traffic_limit_bytes: Number(t.settings.trafficLimitDefaultBytes),
      traffic_used_bytes: 0,
      expires_at: user.user.subscriptionExpiresAt!.toISOString(),
    });
    const second = await validate(token, nodeA);
    expect(second.body).toEqual({ valid: false, reason: 'used' });
  });

  it('altered tokens, garbage and an access JWT are bad_token and do not use up the real one', async () => {
    const user = await subscribedUser(t);
    const token = (await routingTokens(user)).get(nodeA)!;
    const flip = (i: number): string =>
      token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
    const attempts = [
      flip(token.length - 1), // the MAC
      flip(10), // the user id
      flip(token.lastIndexOf('.') - 3), // the request nonce
      `${token.slice(0, -1)}é`, // a tag as long in characters, longer in bytes
      token.replace(user.user.id, owner.user.id), // another user
      'garbage',
      '',
      user.session.accessToken,
      `${token}.x`,
    ];
    for (const attempt of attempts) {
      const response = await validate(attempt, nodeA);
      expect({ attempt, body: response.body as unknown }).toEqual({
        attempt,
        body: { valid: false, reason: 'bad_token' },
      });
    }
    expect((await validate(token, nodeA)).body).toMatchObject({ valid: true });
  });

  it("node A's token at node B is wrong_node, and stays good at node A", async () => {
    const user = await subscribedUser(t);
    const token = (await routingTokens(user)).get(nodeA)!;
    expect((await validate(token, nodeB)).body).toEqual({ valid: false, reason: 'wrong_node' });
    expect((await validate(token, nodeA)).body).toMatchObject({ valid: true });
  });

  it('an expired token is expired', async () => {
    const user = await subscribedUser(t);
    const expired = t.app
      .get(SessionTokens)
      .issue(user.user.id, nodeA, Math.floor(Date.now() / 1000) - 1);
    expect((await validate(expired, nodeA)).body).toEqual({ valid: false, reason: 'expired' });
  });

  it('a user whose subscription ended is no_subscription', async () => {
    const user = await subscribedUser(t);
    const token = (await routingTokens(user)).get(nodeA)!;
    await t.dataSource.query(
      `UPDATE users SET subscription_expires_at = now() - interval '1 second' WHERE id = $1`,
      [user.user.id],
    );
    expect((await validate(token, nodeA)).body).toEqual({
      valid: false,
      reason: 'no_subscription',
    });
  });

  it('a user at the limit is traffic_exceeded; a raised limit applies at the next call', async () => {
    const user = await subscribedUser(t);
    const tokens = [await routingTokens(user), await routingTokens(user)];
    await t.dataSource.query(`UPDATE users SET traffic_used_bytes = 1000 WHERE id = $1`, [
      user.user.id,
    ]);
    await t
      .http()
      .patch(`/api/v1/admin/users/${user.user.id}/traffic-limit`)
      .set(owner.bearer)
      .send({ traffic_limit_bytes: 1000 })
      .expect(200);
    expect((await validate(tokens[0].get(nodeA), nodeA)).body).toEqual({
      valid: false,
      reason: 'traffic_exceeded',
    });
    await t
      .http()
      .patch(`/api/v1/admin/users/${user.user.id}/traffic-limit`)
      .set(owner.bearer)
      .send({ traffic_limit_bytes: 5000 })
      .expect(200);
    expect((await validate(tokens[1].get(nodeA), nodeA)).body).toMatchObject({
      valid: true,
      traffic_limit_bytes: 5000,
      traffic_used_bytes: 1000,
    });
  });

  it('20 concurrent validations of one token give exactly one valid:true', async () => {
    const user = await subscribedUser(t);
    const token = (await routingTokens(user)).get(nodeB)!;
    const answers = await Promise.all(Array.from({ length: 20 }, () => validate(token, nodeB)));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const bodies = answers.map((answer) => answer.body as { valid: boolean; reason?: string });
    expect(bodies.filter((body) => body.valid)).toHaveLength(1);
    expect(bodies.filter((body) => body.reason === 'used')).toHaveLength(19);
  });

  it('validations at once share statements, and each still gets its own answer', async () => {
    const [fresh, ended, capped] = [
      await subscribedUser(t),
      await subscribedUser(t),
      await subscribedUser(t),
    ];
    const endedToken = (await routingTokens(ended)).get(nodeA)!;
    const cappedToken = (await routingTokens(capped)).get(nodeA)!;
    await t.dataSource.query(
      `UPDATE users SET subscription_expires_at = now() - interval '1 second' WHERE id = $1`,
      [ended.user.id],
    );
    await t.dataSource.query(
      `UPDATE users SET traffic_limit_bytes = 10, traffic_used_bytes = 10 WHERE id = $1`,
      [capped.user.id],
    );
    const freshTokens = await Promise.all(
      Array.from({ length: 6 }, async () => (await routingTokens(fresh)).get(nodeA)!),
    );
    const twice = (await routingTokens(fresh)).get(nodeB)!;
    const calls = [
      ...freshTokens.map((token) => ({ token, node: nodeA })),
      { token: twice, node: nodeB },
      { token: twice, node: nodeB },
      { token: endedToken, node: nodeA },
      { token: cappedToken, node: nodeA },
    ];
    const spends = slowedDown(t.app.get(InternalRepository), 'spendTokens');
    try {
      const answers = await Promise.all(calls.map(({ token, node }) => validate(token, node)));
      const reasons = answers.map((answer) =>
        answer.body.valid === true ? 'valid' : (answer.body.reason as string),
      );
      // The two validations of one token may come in either order: one valid, one used.
      expect(reasons.slice(0, 6)).toEqual(Array(6).fill('valid'));
      expect(reasons.slice(6, 8).sort()).toEqual(['used', 'valid']);
      expect(reasons.slice(8)).toEqual(['no_subscription', 'traffic_exceeded']);
      const valid = answers.filter((answer) => answer.body.valid === true);
      expect(valid.every((answer) => answer.body.user_id === fresh.user.id)).toBe(true);
      expect(spends.mock.calls.reduce((sum, [tokens]) => sum + tokens.length, 0)).toBe(
        calls.length,
      );
      expect(spends.mock.calls.length).toBeLessThan(calls.length);
    } finally {
      spends.mockRestore();
    }
  });

  it('spent ids are forgotten once their tokens have expired, not before', async () => {
    const user = await subscribedUser(t);
    const tokens = t.app.get(SessionTokens);
    // At least a second ahead (whole seconds): a busy machine's validation must still find it
    // valid, and so spend it.
    const expiresS = Math.ceil(Date.now() / 1000) + 1;
    const soon = tokens.issue(user.user.id, nodeA, expiresS);
    const later = (await routingTokens(user)).get(nodeA)!;
    expect((await validate(soon, nodeA).expect(200)).body).toMatchObject({ valid: true });
    expect((await validate(later, nodeA).expect(200)).body).toMatchObject({ valid: true });
    await new Promise((resolve) => setTimeout(resolve, expiresS * 1000 + 100 - Date.now()));
    const before = await spentCount();
    const forgotten = await t.app.get(InternalService).forgetExpiredTokens();
    expect(forgotten).toBeGreaterThanOrEqual(1);
    expect(await spentCount()).toBe(before - forgotten);
    const jti = (token: string) => tokens.verify(token)!.jti;
    const rows = (await t.dataSource.query(
      `SELECT jti FROM used_session_tokens WHERE jti = ANY($1::uuid[])`,
      [[jti(soon), jti(later)]],
    )) as { jti: string }[];
    expect(rows.map((row) => row.jti)).toEqual([jti(later)]);
    // Forgetting it does not make the expired token good again.
    expect((await validate(soon, nodeA)).body).toEqual({ valid: false, reason: 'expired' });
  });

  it('every internal route needs the internal secret; a session is no substitute', async () => {
    const user = await subscribedUser(t);
    const token = (await routingTokens(user)).get(nodeA)!;
    const calls = [
      () => t.http().post('/api/v1/internal/validate').send({ token, node_id: nodeA }),
      () => t.http().post('/api/v1/internal/traffic').send({}),
      () => t.http().get(`/api/v1/internal/limits?user_ids=${user.user.id}`),
    ];
    for (const call of calls) {
      for (const headers of [
        {},
        { 'X-Internal-Secret': 'wrong' },
        { 'X-Internal-Secret': `${t.settings.internalSecret}x` },
        user.bearer,
        owner.bearer,
        owner.cookieHeaders,
      ]) {
        const response = await call().set(headers);
        expect(response.status).toBe(401);
        expect(response.body).toMatchObject({ code: 'INTERNAL_SECRET_INVALID' });
      }
    }
    // None of that spent the token.
    expect((await validate(token, nodeA)).body).toMatchObject({ valid: true });
  });

  it('a malformed validate body is 400', async () => {
    for (const body of [{ token: 1, node_id: nodeA }, { token: 'x', node_id: 'no' }, {}]) {
      const response = await t.http().post('/api/v1/internal/validate').set(secret).send(body);
      expect(response.status).toBe(400);
    }
  });

  async function spentCount(): Promise<number> {
    const [{ n }] = (await t.dataSource.query(
      `SELECT count(*)::int AS n FROM used_session_tokens`,
    )) as { n: number }[];
    return n;
  }
});
