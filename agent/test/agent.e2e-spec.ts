import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { startTestApp, type TestApp } from '../../test/harness/app';
import { newUser, type TestUser } from '../../test/harness/factories';
import { createNode, nodeSecret, subscribedUser, waitFor } from '../../test/harness/nodes';
import { NodeAgent } from '../src/agent';
import { emptyJournal, JOURNAL_FILE, type JournalState } from '../src/journal';
import type { AgentSettings } from '../src/settings';
import { FakeCore } from './fake-core';
import { admit, selfSignedCert, tempDir, type TlsFiles } from './helpers';

/**
 * The agent's modules together, in this process, against a fake gRPC core and the real service:
 * admission, slots, reports counted exactly, limits and idle endings, a core restart.
 */
describe('node agent against a fake core and the real service', () => {
  let t: TestApp;
  let owner: TestUser;
  let tls: TlsFiles;
  let nodeId: string;
  const agents: NodeAgent[] = [];
  const cores: FakeCore[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    tls = await selfSignedCert(tempDir('agent-tls'));
    nodeId = (await createNode(t, owner)).id;
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [nodeId],
    );
  });
  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    for (const core of cores) await core.stop();
    await t.close();
  });

  async function startAgent(
    overrides: Partial<AgentSettings> = {},
    prepare: (core: FakeCore) => void = () => undefined,
  ): Promise<{ agent: NodeAgent; core: FakeCore; settings: AgentSettings; url: string }> {
    const core = new FakeCore('v2ray.core', 'vless-in');
    await core.start();
    cores.push(core);
    prepare(core);
    const settings: AgentSettings = {
      apiUrl: `${t.baseUrl}/api/v1`,
      nodeId,
      nodeSecret: await nodeSecret(t, nodeId),
      coreApi: core.address,
      corePrefix: 'v2ray.core',
      coreInboundTag: 'vless-in',
      coreAccessLog: '',
      tunnelPort: 0,
      flow: '',
      admissionHost: '127.0.0.1',
      admissionPort: 0,
      tlsCert: tls.cert,
      tlsKey: tls.key,
      journalDir: tempDir('agent-journal'),
      reportIntervalS: 3600,
      limitsIntervalS: 3600,
      sessionIdleS: 3600,
      maxSessionsPerUser: 2,
      credentialsPollS: 3600,
      ...overrides,
    };
    const agent = new NodeAgent(settings, () => undefined);
    await agent.start();
    agents.push(agent);
    return { agent, core, settings, url: `https://127.0.0.1:${agent.admissionPort}/v1/sessions` };
  }

  async function token(user: TestUser): Promise<string> {
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const entries = response.body as { node_id: string; session_token: string }[];
    return entries.find((entry) => entry.node_id === nodeId)!.session_token;
  }

  async function used(userId: string): Promise<number> {
    const [row] = (await t.dataSource.query(
      `SELECT traffic_used_bytes::text AS used FROM users WHERE id = $1`,
      [userId],
    )) as { used: string }[];
    return Number(row.used);
  }

  const journalOf = (settings: AgentSettings): JournalState =>
    JSON.parse(readFileSync(path.join(settings.journalDir, JOURNAL_FILE), 'utf8')) as JournalState;

  it('admits a valid token once, as a fresh core user named by user and slot', async () => {
    const { core, url, settings } = await startAgent();
    const user = await subscribedUser(t);
    const sessionToken = await token(user);
    const first = await admit(url, tls, { session_token: sessionToken });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      vless_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      flow: '',
      expires_at: user.user.subscriptionExpiresAt!.toISOString(),
    });
    expect(core.users.get(`${user.user.id}.0`)).toEqual({ id: first.body.vless_id, flow: '' });
    expect(journalOf(settings).sessions).toEqual([
      expect.objectContaining({ email: `${user.user.id}.0`, vlessId: first.body.vless_id }),
    ]);

    const again = await admit(url, tls, { session_token: sessionToken });
    expect(again).toEqual({ status: 403, body: { reason: 'used' } });
    expect(core.users.size).toBe(1);
  });

  it('refuses bodies that are not {session_token: string} of at most 4 KB, and bad tokens', async () => {
    const { core, url } = await startAgent();
    for (const body of [
      '',
      'null',
      '[]',
      '{}',
      '{"session_token":5}',
      '{"session_token":',
      'x'.repeat(10),
    ]) {
      expect({ body, answer: await admit(url, tls, body) }).toEqual({
        body,
        answer: { status: 400, body: { reason: 'bad_request' } },
      });
    }
    const big = await admit(url, tls, { session_token: 'x'.repeat(4100) });
    expect(big).toEqual({ status: 400, body: { reason: 'bad_request' } });
    const garbage = await admit(url, tls, { session_token: 'vst2.garbage' });
    expect(garbage).toEqual({ status: 403, body: { reason: 'bad_token' } });
    expect(core.users.size).toBe(0);
  });

  it('answers 503 unavailable when the service cannot be reached', async () => {
    const { core, url } = await startAgent({ apiUrl: 'http://127.0.0.1:1/api/v1' });
    const answer = await admit(url, tls, { session_token: 'vst2.anything' });
    expect(answer).toEqual({ status: 503, body: { reason: 'unavailable' } });
    expect(core.users.size).toBe(0);
  });

  it('keeps at most MAX_SESSIONS_PER_USER: a new session takes the oldest one’s slot', async () => {
    const { core, url } = await startAgent({ maxSessionsPerUser: 2 });
    const user = await subscribedUser(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const answer = await admit(url, tls, { session_token: await token(user) });
      expect(answer.status).toBe(201);
      ids.push(answer.body.vless_id as string);
    }
    expect(new Set(ids).size).toBe(3);
    expect([...core.users.entries()].sort()).toEqual(
      [
        [`${user.user.id}.0`, { id: ids[2], flow: '' }],
        [`${user.user.id}.1`, { id: ids[1], flow: '' }],
      ].sort(),
    );
  });

  it('reports each byte exactly once, ends over-limit users and keeps reporting when empty', async () => {
    const { agent, core, url } = await startAgent({ reportIntervalS: 1 });
    const user = await subscribedUser(t);
    const other = await subscribedUser(t);
    expect((await admit(url, tls, { session_token: await token(user) })).status).toBe(201);
    expect((await admit(url, tls, { session_token: await token(other) })).status).toBe(201);
    core.carry(`${user.user.id}.0`, 1000, 250_000);
    core.carry(`${other.user.id}.0`, 10, 20);
    await waitFor(async () => (await used(user.user.id)) === 251_000, 10_000, 'first report');
    core.carry(`${user.user.id}.0`, 5, 7);
    await waitFor(async () => (await used(user.user.id)) === 251_012, 10_000, 'second report');
    expect(await used(other.user.id)).toBe(30);

    // Empty periods still reach the service (last_report_at moves).
    const stamp = async () =>
      (
        (await t.dataSource.query(`SELECT last_report_at FROM nodes WHERE id = $1`, [nodeId])) as {
          last_report_at: Date | null;
        }[]
      )[0].last_report_at?.getTime() ?? 0;
    const before = await stamp();
    await waitFor(async () => (await stamp()) > before, 10_000, 'an empty report');

    // Over the limit: the service names the user in over_limit and the session ends.
    await t.dataSource.query(`UPDATE users SET traffic_limit_bytes = 300000 WHERE id = $1`, [
      user.user.id,
    ]);
    core.carry(`${user.user.id}.0`, 0, 60_000);
    await waitFor(async () => !core.users.has(`${user.user.id}.0`), 10_000, 'over-limit end');
    expect(await used(user.user.id)).toBe(311_012);
    expect(core.users.has(`${other.user.id}.0`)).toBe(true);
    await agent.stop();
  });

  it('ends the sessions of users the limits call says are not active, and idle sessions', async () => {
    const { core, url } = await startAgent({
      limitsIntervalS: 1,
      reportIntervalS: 1,
      sessionIdleS: 3,
    });
    const lapsed = await subscribedUser(t);
    const busy = await subscribedUser(t);
    expect((await admit(url, tls, { session_token: await token(lapsed) })).status).toBe(201);
    expect((await admit(url, tls, { session_token: await token(busy) })).status).toBe(201);
    await t.dataSource.query(
      `UPDATE users SET subscription_expires_at = now() - interval '1 minute' WHERE id = $1`,
      [lapsed.user.id],
    );
    await waitFor(async () => !core.users.has(`${lapsed.user.id}.0`), 10_000, 'inactive end');
    expect(core.users.has(`${busy.user.id}.0`)).toBe(true);

    // Carrying bytes keeps a session; 3 s without any ends it.
    const started = Date.now();
    while (Date.now() - started < 5_000) {
      core.carry(`${busy.user.id}.0`, 1, 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(core.users.has(`${busy.user.id}.0`)).toBe(true);
    await waitFor(async () => !core.users.has(`${busy.user.id}.0`), 10_000, 'idle end');
  });

  it('after a core restart adds the live sessions again and counts from zero', async () => {
    const { core, url } = await startAgent({ reportIntervalS: 1 });
    const user = await subscribedUser(t);
    const admitted = await admit(url, tls, { session_token: await token(user) });
    const email = `${user.user.id}.0`;
    core.carry(email, 100, 900);
    await waitFor(async () => (await used(user.user.id)) === 1000, 10_000, 'first report');
    core.restart();
    expect(core.users.size).toBe(0);
    await waitFor(async () => core.users.has(email), 10_000, 'the session added again');
    expect(core.users.get(email)).toEqual({ id: admitted.body.vless_id, flow: '' });
    core.carry(email, 40, 60);
    await waitFor(async () => (await used(user.user.id)) === 1100, 10_000, 'report after restart');
  });

  it('sends a report journaled before a restart at once, not a period later', async () => {
    const user = await subscribedUser(t);
    const journalDir = tempDir('agent-journal');
    // What an agent stopped before the service acknowledged its report leaves behind.
    const journal: JournalState = {
      ...emptyJournal(),
      pending: {
        reports: [
          {
            report_id: randomUUID(),
            entries: [{ user_id: user.user.id, bytes_up: 300, bytes_down: 4_000 }],
          },
        ],
        next: {},
        coreStartedAt: Date.now() - 60_000,
      },
    };
    writeFileSync(path.join(journalDir, JOURNAL_FILE), JSON.stringify(journal));
    const started = Date.now();
    const { settings } = await startAgent({ journalDir, reportIntervalS: 3600 });
    await waitFor(async () => (await used(user.user.id)) === 4_300, 5_000, 'the journaled report');
    expect(Date.now() - started).toBeLessThan(5_000);
    await waitFor(async () => journalOf(settings).pending === null, 5_000, 'acknowledged');
  });

  it('splits a period of more than 10,000 users into reports of at most 10,000', async () => {
    const bigNode = (await createNode(t, owner)).id;
    const secret = await nodeSecret(t, bigNode);
    await startAgent({ nodeId: bigNode, nodeSecret: secret, reportIntervalS: 1 }, (core) => {
      for (let i = 0; i < 10_001; i += 1)
        core.counters.set(`${randomUUID()}.0`, { up: 1, down: 2 });
    });
    const sizes = async () =>
      (
        (await t.dataSource.query(
          `SELECT entries FROM traffic_reports WHERE node_id = $1 AND entries > 0 ORDER BY entries`,
          [bigNode],
        )) as { entries: number }[]
      ).map((row) => row.entries);
    await waitFor(async () => (await sizes()).length >= 2, 20_000, 'the two reports');
    expect(await sizes()).toEqual([1, 10_000]);
  });
});
