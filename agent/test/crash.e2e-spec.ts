import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { startTestApp, type TestApp } from '../../test/harness/app';
import { newUser, type TestUser } from '../../test/harness/factories';
import { createNode, nodeSecret, subscribedUser, waitFor } from '../../test/harness/nodes';
import { freePort } from '../../test/harness/processes';
import { JOURNAL_FILE, type JournalState } from '../src/journal';
import { FakeCore } from './fake-core';
import {
  admit,
  selfSignedCert,
  sleep,
  spawnAgent,
  tempDir,
  type AgentProcess,
  type TlsFiles,
} from './helpers';
import { ServiceProxy } from './service-proxy';

const REPORT_INTERVAL_S = 1;

// Agents started, killed and started again: more than the default 30 s on a loaded machine.
jest.setTimeout(90_000);

/**
 * The built agent, killed with SIGKILL at the two moments that lose or double traffic in other
 * node components, cut off from the service for several periods, and with its core restarting:
 * each time the service counted exactly what the core counted, once.
 */
describe('node agent: traffic is counted exactly once through crashes', () => {
  let t: TestApp;
  let owner: TestUser;
  let tls: TlsFiles;
  let nodeId: string;
  const running: { agent?: AgentProcess; core?: FakeCore; proxy?: ServiceProxy }[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    tls = await selfSignedCert(tempDir('crash-tls'));
    nodeId = (await createNode(t, owner)).id;
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [nodeId],
    );
  });
  afterAll(async () => {
    for (const { agent, core, proxy } of running) {
      await agent?.kill();
      await core?.stop();
      await proxy?.close();
    }
    await t.close();
  });

  interface Node {
    core: FakeCore;
    proxy: ServiceProxy;
    journalDir: string;
    agent: AgentProcess;
    url: string;
    start(): Promise<void>;
  }

  /** A fake core, the proxy in front of the service, and the agent (started again by `start`). */
  async function node(): Promise<Node> {
    const core = new FakeCore('xray', 'vless-reality');
    await core.start();
    const proxy = new ServiceProxy(t.baseUrl);
    await proxy.start();
    const entry: (typeof running)[number] = { core, proxy };
    running.push(entry);
    const journalDir = tempDir('crash-journal');
    const secret = await nodeSecret(t, nodeId);
    const port = await freePort();
    const result: Node = {
      core,
      proxy,
      journalDir,
      agent: undefined as unknown as AgentProcess,
      url: `https://127.0.0.1:${port}/v1/sessions`,
      async start() {
        result.agent = spawnAgent({
          VPN_API_URL: `${proxy.url}/api/v1`,
          VPN_NODE_ID: nodeId,
          VPN_NODE_SECRET: secret,
          CORE_API: core.address,
          CORE_API_PREFIX: 'xray',
          CORE_INBOUND_TAG: 'vless-reality',
          VPN_FLOW: 'xtls-rprx-vision',
          ADMISSION_HOST: '127.0.0.1',
          ADMISSION_PORT: String(port),
          TLS_CERT: tls.cert,
          TLS_KEY: tls.key,
          JOURNAL_DIR: journalDir,
          REPORT_INTERVAL_S: String(REPORT_INTERVAL_S),
          LIMITS_INTERVAL_S: '3600',
        });
        entry.agent = result.agent;
        await result.agent.waitFor('agent_started');
      },
    };
    await result.start();
    return result;
  }

  async function session(n: Node, user: TestUser): Promise<string> {
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const entries = response.body as { node_id: string; session_token: string }[];
    const token = entries.find((e) => e.node_id === nodeId)!.session_token;
    const answer = await admit(n.url, tls, { session_token: token });
    expect(answer.status).toBe(201);
    expect(answer.body.flow).toBe('xtls-rprx-vision');
    return `${user.user.id}.0`;
  }

  async function used(userId: string): Promise<number> {
    const [row] = (await t.dataSource.query(
      `SELECT traffic_used_bytes::text AS used FROM users WHERE id = $1`,
      [userId],
    )) as { used: string }[];
    return Number(row.used);
  }

  const journal = (n: Node): JournalState =>
    JSON.parse(readFileSync(path.join(n.journalDir, JOURNAL_FILE), 'utf8')) as JournalState;

  it('killed after the journal write and before the send: the same report is sent on restart', async () => {
    const n = await node();
    const user = await subscribedUser(t);
    const email = await session(n, user);
    n.core.carry(email, 1_000, 50_000);
    await waitFor(async () => (await used(user.user.id)) === 51_000, 10_000, 'first report');

    n.proxy.mode = 'hold-report';
    n.core.carry(email, 7, 70_000);
    const seenBefore = n.proxy.reports.length;
    const held = await waitFor(
      async () =>
        n.proxy.reports
          .slice(seenBefore)
          .some((r) => r.entries.some((e) => e.user_id === user.user.id)),
      10_000,
      'the report held',
    ).then(() => n.proxy.reports.at(-1)!);
    await n.agent.kill();
    expect(journal(n).pending?.reports.map((r) => r.report_id)).toEqual([held.report_id]);
    expect(await used(user.user.id)).toBe(51_000);

    n.proxy.mode = 'pass';
    const resentFrom = n.proxy.reports.length;
    await n.start();
    await waitFor(async () => (await used(user.user.id)) === n.core.total(), 10_000, 'the resend');
    const resent = n.proxy.reports[resentFrom];
    expect(resent).toMatchObject({ ...held, answer: { applied: true, over_limit: [] } });
    expect(await used(user.user.id)).toBe(121_007);
  });

  it('killed after the send and before recording the answer: the repeat is not counted twice', async () => {
    const n = await node();
    const user = await subscribedUser(t);
    const email = await session(n, user);
    n.proxy.mode = 'swallow-answer';
    n.core.carry(email, 300, 3_000);
    await waitFor(async () => (await used(user.user.id)) === 3_300, 10_000, 'the applied report');
    const sent = () =>
      n.proxy.reports.find((r) => r.entries.some((e) => e.user_id === user.user.id));
    // The service commits before its answer reaches the proxy (which then swallows it).
    await waitFor(async () => sent()?.answer !== undefined, 10_000, "the service's answer");
    const applied = sent()!;
    expect(applied.answer).toMatchObject({ applied: true, over_limit: [] });
    await n.agent.kill();
    expect(journal(n).pending?.reports.map((r) => r.report_id)).toEqual([applied.report_id]);

    n.proxy.mode = 'pass';
    const resentFrom = n.proxy.reports.length;
    await n.start();
    await n.proxy.reportsSeen(resentFrom + 2);
    expect(n.proxy.reports[resentFrom]).toMatchObject({
      ...applied,
      answer: { applied: false, over_limit: [] },
    });
    n.core.carry(email, 1, 2);
    await waitFor(async () => (await used(user.user.id)) === 3_303, 10_000, 'the next report');
    expect(n.core.total()).toBe(3_303);
  });

  it('keeps every byte while the service is away for several periods', async () => {
    const n = await node();
    const user = await subscribedUser(t);
    const email = await session(n, user);
    n.proxy.mode = 'down';
    for (let i = 0; i < 4; i += 1) {
      n.core.carry(email, 11, 1_000 + i);
      await sleep(REPORT_INTERVAL_S * 1000);
    }
    await n.agent.waitFor('report_failed');
    expect(await used(user.user.id)).toBe(0);
    n.proxy.mode = 'pass';
    await waitFor(async () => (await used(user.user.id)) === n.core.total(), 40_000, 'the backlog');
    expect(await used(user.user.id)).toBe(4 * 11 + 4_006);

    // SIGTERM: a clean stop, nothing left pending.
    expect(await n.agent.stop()).toBe(0);
    expect(n.agent.lines.at(-1)).toMatchObject({ event: 'agent_stopped', node: nodeId });
    expect(journal(n).pending).toBeNull();
  });

  it('core restart during a transfer: bytes after its last read are the only ones missing', async () => {
    const n = await node();
    const user = await subscribedUser(t);
    const email = await session(n, user);
    n.core.carry(email, 500, 5_000);
    await waitFor(async () => (await used(user.user.id)) === 5_500, 10_000, 'first report');
    // Counted by the core after the agent's last read, then lost with the core's counters.
    const lostBytes = 40 + 400;
    n.core.carry(email, 40, 400);
    n.core.restart();
    await waitFor(async () => n.core.users.has(email), 10_000, 'the session added again');
    n.core.carry(email, 60, 600);
    await waitFor(async () => (await used(user.user.id)) === 5_500 + 660, 10_000, 'after restart');
    await sleep(2 * REPORT_INTERVAL_S * 1000);
    expect({ counted: await used(user.user.id), lostBytes }).toEqual({
      counted: 5_500 + 660,
      lostBytes: 440,
    });
  });
});
