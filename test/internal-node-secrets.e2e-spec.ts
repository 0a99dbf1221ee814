import { randomUUID } from 'node:crypto';
import { NODE_SECRET_STALE_MS } from '../src/nodes/node-secret-lookup';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { createNode, nodeSecret, subscribedUser, waitFor } from './harness/nodes';

/**
 * Each node calls /internal/* with a secret of its own: it speaks for that node only, so a stolen
 * node can neither report traffic for another node nor spend another node's tokens.
 */
describe("internal: a node's own secret", () => {
  let t: TestApp;
  let owner: TestUser;
  let nodeA: string;
  let nodeB: string;
  let secretA: Record<string, string>;
  let secretB: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    nodeA = (await createNode(t, owner, { name: 'a' })).id;
    nodeB = (await createNode(t, owner, { name: 'b' })).id;
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = ANY($1::uuid[])`,
      [[nodeA, nodeB]],
    );
    secretA = { 'X-Internal-Secret': await nodeSecret(t, nodeA) };
    secretB = { 'X-Internal-Secret': await nodeSecret(t, nodeB) };
  });
  afterAll(() => t.close());

  async function tokenFor(user: TestUser, nodeId: string): Promise<string> {
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const entries = response.body as { node_id: string; session_token: string }[];
    return entries.find((entry) => entry.node_id === nodeId)!.session_token;
  }

  const validate = (headers: Record<string, string>, token: string, nodeId: string) =>
    t.http().post('/api/v1/internal/validate').set(headers).send({ token, node_id: nodeId });
  const report = (headers: Record<string, string>, nodeId: string, userId: string) =>
    t
      .http()
      .post('/api/v1/internal/traffic')
      .set(headers)
      .send({
        node_id: nodeId,
        report_id: randomUUID(),
        entries: [{ user_id: userId, bytes_up: 1000, bytes_down: 2000 }],
      });
  const usedBytes = async (userId: string): Promise<number> => {
    const [row] = (await t.dataSource.query(
      `SELECT traffic_used_bytes::text AS used FROM users WHERE id = $1`,
      [userId],
    )) as { used: string }[];
    return Number(row.used);
  };
  const lastReportAt = async (nodeId: string): Promise<Date | null> => {
    const [row] = (await t.dataSource.query(`SELECT last_report_at FROM nodes WHERE id = $1`, [
      nodeId,
    ])) as { last_report_at: Date | null }[];
    return row.last_report_at;
  };

  it("validates its own node's tokens; another node's token is 403 and stays unspent", async () => {
    const user = await subscribedUser(t);
    const tokenB = await tokenFor(user, nodeB);
    const stolen = await validate(secretA, tokenB, nodeB);
    expect(stolen.status).toBe(403);
    expect(stolen.body).toMatchObject({ code: 'FORBIDDEN' });
    // Naming its own node does not spend the other node's token either.
    expect((await validate(secretA, tokenB, nodeA)).body).toEqual({
      valid: false,
      reason: 'wrong_node',
    });
    const own = await validate(secretB, tokenB, nodeB.toUpperCase());
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ valid: true, user_id: user.user.id });
  });

  it("reports its own node's traffic; a report for another node is 403 and counts nothing", async () => {
    const user = await subscribedUser(t);
    const forged = await report(secretA, nodeB, user.user.id);
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ code: 'FORBIDDEN' });
    expect(await usedBytes(user.user.id)).toBe(0);
    expect(await lastReportAt(nodeB)).toBeNull();

    const own = await report(secretA, nodeA, user.user.id);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ applied: true, over_limit: [] });
    expect(await usedBytes(user.user.id)).toBe(3000);
    expect(await lastReportAt(nodeA)).not.toBeNull();
  });

  it('a body without a node, or naming it in another form, is refused to a node secret', async () => {
    const user = await subscribedUser(t);
    for (const body of [
      { token: 'x' },
      { token: 'x', node_id: 7 },
      { token: 'x', node_id: `${nodeA}0` },
      [{ node_id: nodeA }],
    ]) {
      const response = await t
        .http()
        .post('/api/v1/internal/validate')
        .set(secretA)
        .send(body as object);
      expect({ body, status: response.status }).toEqual({ body, status: 403 });
    }
    // The query names the node when the body does not (a GET would); the body wins over it.
    const viaQuery = await t
      .http()
      .post(`/api/v1/internal/traffic?node_id=${nodeA}`)
      .set(secretA)
      .send({ node_id: nodeB, report_id: randomUUID(), entries: [] });
    expect(viaQuery.status).toBe(403);
    expect(await usedBytes(user.user.id)).toBe(0);
  });

  it('limits answer to any node secret (read-only), and INTERNAL_SECRET speaks for any node', async () => {
    const user = await subscribedUser(t);
    const limits = await t
      .http()
      .get('/api/v1/internal/limits')
      .query({ user_ids: user.user.id })
      .set(secretB);
    expect(limits.status).toBe(200);
    expect(limits.body).toEqual([
      expect.objectContaining({ user_id: user.user.id, active: true }) as unknown,
    ]);
    const operator = { 'X-Internal-Secret': t.settings.internalSecret };
    expect((await report(operator, nodeB, user.user.id)).status).toBe(200);
    expect(await usedBytes(user.user.id)).toBe(3000);
  });

  it('an unknown, empty or huge secret is 401 on every route', async () => {
    const user = await subscribedUser(t);
    for (const value of [
      'x'.repeat(43),
      secretA['X-Internal-Secret'].slice(0, -1),
      `${secretA['X-Internal-Secret']}x`,
      'y'.repeat(5000),
    ]) {
      const headers = { 'X-Internal-Secret': value };
      const responses = [
        await validate(headers, 'x', nodeA),
        await report(headers, nodeA, user.user.id),
        await t
          .http()
          .get('/api/v1/internal/limits')
          .query({ user_ids: user.user.id })
          .set(headers),
      ];
      for (const response of responses) {
        expect(response.status).toBe(401);
        expect(response.body).toMatchObject({ code: 'INTERNAL_SECRET_INVALID' });
      }
    }
    expect(await usedBytes(user.user.id)).toBe(0);
  });

  it("a deleted node's secret is refused at once on the instance that deleted it", async () => {
    const gone = (await createNode(t, owner, { name: 'gone' })).id;
    const secret = { 'X-Internal-Secret': await nodeSecret(t, gone) };
    const user = await subscribedUser(t);
    expect((await report(secret, gone, user.user.id)).status).toBe(200); // now remembered
    await t.http().delete(`/api/v1/admin/nodes/${gone}`).set(owner.bearer).expect(204);
    const after = await report(secret, gone, user.user.id);
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ code: 'INTERNAL_SECRET_INVALID' });
    const limits = await t
      .http()
      .get('/api/v1/internal/limits')
      .query({ user_ids: user.user.id })
      .set(secret);
    expect(limits.status).toBe(401);
    expect(await usedBytes(user.user.id)).toBe(3000);
  });

  it('routing offers no node that has no agent certificate (made before the agent, not provisioned since)', async () => {
    const old = (await createNode(t, owner, { name: 'pre-agent' })).id;
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready', admission_cert_pem = NULL,
              admission_cert_sha256 = NULL, admission_key_enc = NULL, agent_secret_enc = NULL,
              agent_secret_sha256 = NULL
        WHERE id = $1`,
      [old],
    );
    const user = await subscribedUser(t);
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const ids = (response.body as { node_id: string }[]).map((entry) => entry.node_id);
    expect(ids).toEqual(expect.arrayContaining([nodeA, nodeB]));
    expect(ids).not.toContain(old);
  });
  // Last: the second instance shares the process's passport registry, which closing it leaves
  // pointing at a closed application.
  it('and on another instance within NODE_SECRET_STALE_MS, though it remembered the secret; so is a replaced secret', async () => {
    const other = await startTestApp({}, { database: t.database });
    try {
      const user = await subscribedUser(t);
      const viaOther = (secret: Record<string, string>) =>
        other.http().get('/api/v1/internal/limits').query({ user_ids: user.user.id }).set(secret);
      const refusedWithinBound = async (secret: Record<string, string>, since: number) => {
        await waitFor(
          async () => (await viaOther(secret)).status === 401,
          NODE_SECRET_STALE_MS + 3000,
          'refusal',
        );
        expect(Date.now() - since).toBeLessThanOrEqual(NODE_SECRET_STALE_MS + 1000);
      };

      const gone = (await createNode(t, owner, { name: 'gone-elsewhere' })).id;
      const goneSecret = { 'X-Internal-Secret': await nodeSecret(t, gone) };
      expect((await viaOther(goneSecret)).status).toBe(200); // remembered by the other instance
      await t.http().delete(`/api/v1/admin/nodes/${gone}`).set(owner.bearer).expect(204);
      await refusedWithinBound(goneSecret, Date.now());

      // Provisioning gives a node a new secret in one UPDATE of its row, as here.
      const kept = (await createNode(t, owner, { name: 'new-secret' })).id;
      const oldSecret = { 'X-Internal-Secret': await nodeSecret(t, kept) };
      expect((await viaOther(oldSecret)).status).toBe(200);
      await t.dataSource.query(
        `UPDATE nodes SET agent_secret_sha256 = encode(sha256('replaced'::bytea), 'hex') WHERE id = $1`,
        [kept],
      );
      await refusedWithinBound(oldSecret, Date.now());
      const newSecret = { 'X-Internal-Secret': 'replaced' };
      expect((await viaOther(newSecret)).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});
