import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { cpus, loadavg } from 'node:os';
import * as path from 'node:path';
import { NodeAgent } from '../src/agent';
import { coreSchema, typed } from '../src/core-schema';
import { CORE_CONCURRENCY } from '../src/credentials';
import { deviceEmail } from '../src/emails';
import { JOURNAL_FILE, type JournalState } from '../src/journal';
import { nudgeMac } from '../src/nudge';
import type { WireCredential } from '../src/service-client';
import type { AgentSettings } from '../src/settings';
import { FakeCore } from './fake-core';
import { FakeCoreProcess } from './fake-core-process';
import { FakeService } from './fake-service';
import { freePort } from '../../test/harness/processes';
import { admit, selfSignedCert, sleep, spawnAgent, tempDir, type TlsFiles } from './helpers';

// 8,000 devices applied several times over, on a shared 2-core machine.
jest.setTimeout(60_000);

/** Polls `check` every 20 ms until it holds; answers how long that took. */
async function until(check: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await sleep(20);
  }
  return Date.now() - started;
}

const credential = (userId = randomUUID(), expiresAt: string | null = null): WireCredential => ({
  device_id: randomUUID(),
  user_id: userId,
  vless_id: randomUUID(),
  expires_at: expiresAt,
});

/** The machine's CPU ticks so far, busy and all (Linux /proc/stat, every core). */
function machineTicks(): { busy: number; all: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = fields.map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are the idle ones.
  const all = ticks.slice(0, 8).reduce((sum, n) => sum + n, 0);
  return { busy: all - ticks[3] - ticks[4], all };
}

/** CPU time (user and system) a process used so far, in ms (Linux /proc; 100 ticks a second). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const [utime, stime] = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .slice(11, 13)
    .map(Number);
  return (utime + stime) * 10;
}

const emailOf = (device: WireCredential): string => deviceEmail(device.user_id, device.device_id);

/**
 * How many times a bare client's CPU time for the same 8,000 core calls the agent may spend on a
 * full sync, and on putting the devices back after a core restart (see the 8,000 devices' test).
 */
const SYNC_FACTOR = 2.5;
const RESTORE_FACTOR = 1.6;

/** What bare-core-calls.mjs reports: its calls, those not answered OK, its CPU and wall time. */
interface BareCalls {
  calls: number;
  failed: number;
  cpuMs: number;
  wallMs: number;
}

/**
 * `count` AlterInbound additions of new devices to the core at `address` (inbound vless-reality),
 * made by bare-core-calls.mjs in a process of its own: node's http2 alone, frames encoded before
 * the clock starts, one connection, CORE_CONCURRENCY calls at once as the agent makes them.
 */
async function bareCoreCalls(address: string, count: number): Promise<BareCalls> {
  const schema = coreSchema('xray');
  const { request, path: grpcPath } = schema.alterInbound;
  const frames = Array.from({ length: count }, () => {
    const user = {
      email: deviceEmail(randomUUID(), randomUUID()),
      account: typed(schema.vlessAccount, { id: randomUUID(), flow: 'xtls-rprx-vision' }),
    };
    const operation = typed(schema.addUser, { user });
    const message = request.encode(request.create({ tag: 'vless-reality', operation })).finish();
    const header = Buffer.alloc(5);
    header.writeUInt32BE(message.length, 1);
    return Buffer.concat([header, message]);
  });
  const file = path.join(tempDir('bare-core-calls'), 'frames');
  writeFileSync(file, Buffer.concat(frames));
  const script = path.join(__dirname, 'bare-core-calls.mjs');
  const args = [script, address, grpcPath, String(CORE_CONCURRENCY), file];
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, args, (error, out) => (error ? reject(error) : resolve(out))),
  );
  return JSON.parse(stdout) as BareCalls;
}

/**
 * The agent's device credentials against a fake gRPC core and a fake service that answers
 * `/internal/credentials` and `/internal/traffic` with the contract's wire shapes: syncs full and
 * incremental, nudges, core restarts, expiry, the service away, per-device reports, and closing.
 */
describe('node agent: device credentials', () => {
  let tls: TlsFiles;
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    tls = await selfSignedCert(tempDir('credentials-tls'));
  });
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  interface Node {
    agent: NodeAgent;
    core: FakeCore;
    service: FakeService;
    settings: AgentSettings;
    lines: Record<string, unknown>[];
    nudge(body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
    /** A nudge for the service's current version with the right mac. */
    nudgeNow(): Promise<number>;
    journal(): JournalState;
  }

  async function node(
    overrides: Partial<AgentSettings> = {},
    given: { core?: FakeCore; service?: FakeService } = {},
  ): Promise<Node> {
    const nodeId = overrides.nodeId ?? randomUUID();
    const secret = overrides.nodeSecret ?? randomBytes(32).toString('hex');
    let core = given.core;
    if (!core) {
      const made = new FakeCore('xray', 'vless-reality');
      await made.start();
      stops.push(() => made.stop());
      core = made;
    }
    let service = given.service;
    if (!service) {
      const made = new FakeService(nodeId, secret);
      await made.start();
      stops.push(() => made.stop());
      service = made;
    }
    const settings: AgentSettings = {
      apiUrl: service.url,
      nodeId,
      nodeSecret: secret,
      coreApi: core.address,
      corePrefix: 'xray',
      coreInboundTag: 'vless-reality',
      coreAccessLog: '',
      tunnelPort: 0,
      flow: 'xtls-rprx-vision',
      admissionHost: '127.0.0.1',
      admissionPort: 0,
      tlsCert: tls.cert,
      tlsKey: tls.key,
      journalDir: tempDir('credentials-journal'),
      reportIntervalS: 3600,
      limitsIntervalS: 3600,
      sessionIdleS: 3600,
      maxSessionsPerUser: 5,
      credentialsPollS: 3600,
      ...overrides,
    };
    const lines: Record<string, unknown>[] = [];
    const agent = new NodeAgent(settings, (event, fields = {}) => lines.push({ event, ...fields }));
    await agent.start();
    stops.push(() => agent.stop());
    const url = `https://127.0.0.1:${agent.admissionPort}/v1/credentials/nudge`;
    const result: Node = {
      agent,
      core,
      service,
      settings,
      lines,
      nudge: (body) => admit(url, tls, body),
      async nudgeNow() {
        const version = service.version;
        const answer = await admit(url, tls, {
          node_id: nodeId,
          version,
          mac: nudgeMac(secret, nodeId, version),
        });
        expect(answer).toEqual({ status: 204, body: {} });
        return version;
      },
      journal: () =>
        JSON.parse(
          readFileSync(path.join(settings.journalDir, JOURNAL_FILE), 'utf8'),
        ) as JournalState,
    };
    return result;
  }

  /** The fake service with `count` devices already, and a node synced to them. */
  async function syncedNode(count: number, overrides: Partial<AgentSettings> = {}) {
    const n = await node(overrides);
    n.service.replaceAll(Array.from({ length: count }, () => credential()));
    await n.nudgeNow();
    await until(() => n.core.users.size === count, 10_000, `${count} devices in the core`);
    return n;
  }

  it('applies a full set of 8,000 devices in under 2 s, and again after a core restart', async () => {
    // The built agent in a process of its own, as on a node: the timing is the agent's, not that of
    // this test process (whose heap holds the TypeScript compiler).
    const core = new FakeCoreProcess();
    await core.start();
    stops.push(() => core.stop());
    // The bare client's calls, once before the agent starts (the restart forgets its devices) and
    // once between the sync and the restore: see the bars below.
    const bareBefore = await bareCoreCalls(core.address, 8_000);
    await core.restart();
    const nodeId = randomUUID();
    const secret = randomBytes(32).toString('hex');
    const service = new FakeService(nodeId, secret);
    await service.start();
    stops.push(() => service.stop());
    const port = await freePort();
    const agent = spawnAgent({
      VPN_API_URL: service.url,
      VPN_NODE_ID: nodeId,
      VPN_NODE_SECRET: secret,
      CORE_API: core.address,
      CORE_API_PREFIX: 'xray',
      CORE_INBOUND_TAG: 'vless-reality',
      ADMISSION_HOST: '127.0.0.1',
      ADMISSION_PORT: String(port),
      TLS_CERT: tls.cert,
      TLS_KEY: tls.key,
      JOURNAL_DIR: tempDir('credentials-journal'),
      REPORT_INTERVAL_S: '3600',
      CREDENTIALS_POLL_S: '3600',
    });
    stops.push(async () => void (await agent.stop()));
    await agent.waitFor('agent_started');
    await until(() => service.fetches.length === 1, 5_000, 'the fetch at start');
    expect(service.fetches[0].since).toBe(0);

    const version = service.replaceAll(Array.from({ length: 8_000 }, () => credential()));
    const pid = agent.child.pid!;
    const loadBefore = loadavg()[0];
    const machineBefore = machineTicks();
    const cpuBefore = cpuMs(pid);
    const started = Date.now();
    const answer = await admit(`https://127.0.0.1:${port}/v1/credentials/nudge`, tls, {
      node_id: nodeId,
      version,
      mac: nudgeMac(secret, nodeId, version),
    });
    expect(answer.status).toBe(204);
    const synced = await agent.waitFor('credentials_synced');
    // From the nudge: the fetch, the journal write and 8,000 AlterInbound calls.
    const tookMs = Date.now() - started;
    expect(synced).toMatchObject({ version, full: true, devices: 8_000, added: 8_000, removed: 0 });
    const agentCpuMs = cpuMs(pid) - cpuBefore;
    expect(await core.size()).toBe(8_000);
    // Under 2 s from the nudge. On a machine busier than its cores before, or with its cores
    // mostly busy during the sync (other test files share this one), the wall time measures the
    // queue for a CPU, and the agent's own CPU time is held to a bar instead: 3 s, since a
    // process's CPU time itself grows by up to half when the other thread of its core is busy
    // (2.4-2.9 s seen beside the CI's other tests, where an idle machine syncs in under 2 s).
    // The load figures only tell a busy machine after the fact (CI once read a machine idle
    // before and 75% busy or less during, and still took over 2 s): a wall time over the bar
    // whose agent spent under 2 s of CPU waited for a CPU, not for the agent's work.
    const machineAfter = machineTicks();
    const machineBusy =
      (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.all - machineBefore.all);
    const busy = loadBefore >= cpus().length || machineBusy > 0.75;
    const cpuBar = busy ? 3_000 : 2_000;
    // The machine's speed changes between evenings (a slower VM spends twice the CPU on the same
    // work), so fixed bars alone fail on a slow evening: the CPU bar is also a multiple of what the
    // same 8,000 calls cost a bare client (node's http2 alone, frames encoded beforehand, as many
    // at once) on the same core in this same run, its mean over a run before the agent's and one
    // after. The agent's sync also fetches and parses the set, journals it and encodes each call:
    // 1.3-2.0 times the bare client's CPU seen (alone and beside another test file), calls made one
    // at a time 2.2-2.6, twice the calls 3.1. Its restore is the calls alone: 0.8-1.3 times, one at
    // a time 1.5-1.8, twice the calls 2.0. Each run of those regressions failed one bar or both.
    const bareBetween = await bareCoreCalls(core.address, 8_000);
    expect([bareBefore, bareBetween]).toMatchObject([
      { calls: 8_000, failed: 0 },
      { calls: 8_000, failed: 0 },
    ]);
    const baselineCpuMs = (bareBefore.cpuMs + bareBetween.cpuMs) / 2;
    const baselines = [bareBefore.cpuMs, bareBetween.cpuMs];
    const ratio = agentCpuMs / baselineCpuMs;
    // toEqual, whose diff shows every figure when `within` fails.
    const sync = {
      tookMs,
      agentCpuMs,
      baselineCpuMs,
      baselines,
      ratio,
      machineBusy,
      loadBefore,
      within: tookMs < 2_000 || agentCpuMs < Math.max(cpuBar, SYNC_FACTOR * baselineCpuMs),
    };
    expect(sync).toEqual({ ...sync, within: true });

    // The core restart forgets the bare client's devices with the agent's.
    await core.restart();
    const cpuAtRestart = cpuMs(pid);
    const restored = await agent.waitFor('credentials_restored', (line) => line.added === 8_000);
    const restoreCpuMs = cpuMs(pid) - cpuAtRestart;
    expect(await core.size()).toBe(8_000);
    const restore = {
      restoredMs: restored.ms,
      restoreCpuMs,
      baselineCpuMs,
      ratio: restoreCpuMs / baselineCpuMs,
      within:
        Number(restored.ms) < 2_000 ||
        restoreCpuMs < Math.max(cpuBar, RESTORE_FACTOR * baselineCpuMs),
    };
    expect(restore).toEqual({ ...restore, within: true });
  });

  it('names each device’s core user by its user and device, with its VLESS id and the flow', async () => {
    const n = await syncedNode(2);
    for (const device of n.service.devices.values()) {
      expect(n.core.users.get(`${device.user_id}.d.${device.device_id}`)).toEqual({
        id: device.vless_id,
        flow: 'xtls-rprx-vision',
      });
    }
  });

  it('brings incremental upserts, removals and changed VLESS ids to the core', async () => {
    const n = await syncedNode(3);
    const [kept, removed, rotated] = [...n.service.devices.values()];
    const versionBefore = n.service.version;
    const added = credential();
    n.service.upsert(added);
    n.service.remove(removed.device_id);
    n.service.upsert({ ...rotated, vless_id: randomUUID() });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    n.service.upsert({ ...kept, expires_at: later });
    const version = await n.nudgeNow();
    await until(() => n.core.users.has(emailOf(added)), 2_000, 'the new device');
    expect(n.service.fetches.at(-1)?.since).toBe(versionBefore);
    await until(() => !n.core.users.has(emailOf(removed)), 2_000, 'the removal');
    expect(n.core.users.get(emailOf(rotated))?.id).toBe(
      n.service.devices.get(rotated.device_id)!.vless_id,
    );
    expect([...n.core.users.keys()].sort()).toEqual(
      [emailOf(kept), emailOf(rotated), emailOf(added)].sort(),
    );
    const journal = n.journal();
    expect(journal.credentials.version).toBe(version);
    expect(journal.credentials.devices.find((d) => d.deviceId === kept.device_id)).toEqual({
      deviceId: kept.device_id,
      userId: kept.user_id,
      vlessId: kept.vless_id,
      expiresAt: Date.parse(later),
    });
  });

  it('a nudge with the right mac fetches within a second; a wrong one is 403 and fetches nothing', async () => {
    const n = await node();
    await until(() => n.service.fetches.length === 1, 5_000, 'the fetch at start');
    const { nodeId, nodeSecret } = n.settings;

    const device = credential();
    const version = n.service.upsert(device);
    const wrong = [
      { node_id: nodeId, version, mac: nudgeMac('another secret', nodeId, version) },
      { node_id: nodeId, version, mac: nudgeMac(nodeSecret, nodeId, version + 1) },
      { node_id: nodeId, version, mac: 'ab'.repeat(31) },
      { node_id: randomUUID(), version, mac: nudgeMac(nodeSecret, nodeId, version) },
    ];
    for (const body of wrong) {
      expect({ body, answer: await n.nudge(body) }).toEqual({
        body,
        answer: { status: 403, body: { reason: 'forbidden' } },
      });
    }
    const bad = [
      '',
      'null',
      '[]',
      '{"node_id":"x"}',
      { node_id: nodeId, version: -1, mac: 'x' },
      { node_id: nodeId, version: 1.5, mac: 'x' },
      { node_id: nodeId, version: '1', mac: nudgeMac(nodeSecret, nodeId, 1) },
      {
        node_id: nodeId,
        version,
        mac: nudgeMac(nodeSecret, nodeId, version),
        pad: 'x'.repeat(4100),
      },
    ];
    for (const body of bad) {
      expect({ body, answer: await n.nudge(body) }).toEqual({
        body,
        answer: { status: 400, body: { reason: 'bad_request' } },
      });
    }
    await sleep(1_000);
    expect(n.service.fetches).toHaveLength(1);
    expect(n.core.users.size).toBe(0);

    const sent = Date.now();
    await n.nudgeNow();
    await until(() => n.service.fetches.length === 2, 1_000, 'the fetch after the nudge');
    expect(n.service.fetches[1].at - sent).toBeLessThan(1_000);
    await until(() => n.core.users.has(emailOf(device)), 1_000, 'the device in the core');

    // A nudge for the version the node has (a repeat, or a replay) fetches nothing.
    await n.nudgeNow();
    await sleep(300);
    expect(n.service.fetches).toHaveLength(2);
  });

  it('nudges while a fetch runs make at most one more fetch', async () => {
    const n = await syncedNode(2_000);
    const before = n.service.fetches.length;
    n.service.upsert(credential());
    await Promise.all(Array.from({ length: 10 }, () => n.nudgeNow()));
    await until(() => n.core.users.size === 2_001, 2_000, 'the change');
    await sleep(500);
    expect(n.service.fetches.length - before).toBeGreaterThanOrEqual(1);
    expect(n.service.fetches.length - before).toBeLessThanOrEqual(2);
  });

  it('after a core restart puts every device back', async () => {
    const n = await syncedNode(3_000);
    const before = new Map(n.core.users);
    n.core.restart();
    expect(n.core.users.size).toBe(0);
    await until(() => n.core.users.size === 3_000, 10_000, 'the devices added again');
    expect(new Map(n.core.users)).toEqual(before);
    // Logged once the last addition has been answered, a moment after the core has it.
    await until(
      () => n.lines.some((line) => line.event === 'credentials_restored' && line.added === 3_000),
      5_000,
      'the restore logged',
    );
  });

  it('removes a device itself at its expires_at, and never adds one already expired', async () => {
    const n = await node();
    const expiresAt = Date.now() + 1_500;
    const expiring = credential(randomUUID(), new Date(expiresAt).toISOString());
    const lasting = credential();
    const gone = credential(randomUUID(), new Date(Date.now() - 1_000).toISOString());
    n.service.upsert(expiring);
    n.service.upsert(lasting);
    n.service.upsert(gone);
    await n.nudgeNow();
    await until(() => n.core.users.size === 2, 2_000, 'the two devices');
    expect(n.core.users.has(emailOf(gone))).toBe(false);
    await until(() => !n.core.users.has(emailOf(expiring)), 4_000, 'the expiry');
    const late = Date.now() - expiresAt;
    expect({ late, inTime: late >= 0 && late < 1_000 }).toMatchObject({ inTime: true });
    expect(n.core.users.has(emailOf(lasting))).toBe(true);
    expect(n.journal().credentials.devices.map((d) => d.deviceId)).toEqual([lasting.device_id]);
    await until(
      () => n.lines.some((l) => l.event === 'credential_expired'),
      1_000,
      'the expiry logged',
    );
    expect(n.lines).toContainEqual(
      expect.objectContaining({ event: 'credential_expired', device_id: expiring.device_id }),
    );
  });

  it('with the service away keeps its set, and a restarted node restores it from the journal', async () => {
    const n = await syncedNode(500, { credentialsPollS: 1 });
    const set = new Map(n.core.users);
    n.service.down = true;
    await until(
      () => n.lines.some((line) => line.event === 'credentials_fetch_failed'),
      5_000,
      'a failed poll',
    );
    n.core.restart();
    await until(() => n.core.users.size === 500, 5_000, 'the set back in the restarted core');
    await n.agent.stop();

    // The node restarts (the core too) while the service is still away.
    const core = new FakeCore('xray', 'vless-reality');
    await core.start();
    stops.push(() => core.stop());
    const again = await node(
      { ...n.settings, coreApi: core.address },
      { core, service: n.service },
    );
    expect(new Map(core.users)).toEqual(set);
    expect(again.lines.find((line) => line.event === 'agent_started')).toMatchObject({
      devices: 500,
      credentials_version: n.service.version,
    });
    await until(
      () => again.lines.some((line) => line.event === 'credentials_fetch_failed'),
      5_000,
      'its failed fetch',
    );
    expect(core.users.size).toBe(500);

    // The service back: the next poll asks for the changes since the journal's version.
    n.service.down = false;
    const added = credential();
    n.service.upsert(added);
    await until(() => core.users.has(emailOf(added)), 10_000, 'the change after the outage');
    expect(n.service.fetches.at(-1)?.since).toBe(n.service.version - 1);
  });

  describe('connections, reports and the one-address rule', () => {
    let tunnel: net.Server;
    let tunnelPort: number;
    const sockets: net.Socket[] = [];

    beforeAll(async () => {
      // The core's side of tunnel connections: sockets on this port are what `ss -K` closes.
      tunnel = net.createServer((socket) => {
        socket.on('error', () => undefined);
        sockets.push(socket);
      });
      await new Promise<void>((resolve) => tunnel.listen(0, '127.0.0.1', resolve));
      tunnelPort = (tunnel.address() as net.AddressInfo).port;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => tunnel.close(resolve));
    });

    /** A client's connection to the tunnel port from `from`, and the access log's line for it. */
    async function connect(
      accessLog: string,
      email: string,
      from = '127.0.0.1',
    ): Promise<{ socket: net.Socket; closed: Promise<number> }> {
      const socket = net.connect({ host: '127.0.0.1', port: tunnelPort, localAddress: from });
      socket.on('error', () => undefined);
      sockets.push(socket);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const closed = new Promise<number>((resolve) =>
        socket.once('close', () => resolve(Date.now())),
      );
      appendFileSync(
        accessLog,
        `2026/11/27 10:00:00 from ${from}:${socket.localPort} accepted tcp:example.com:443 [vless-reality >> direct] email: ${email}\n`,
      );
      return { socket, closed };
    }

    async function accessNode() {
      const accessLog = path.join(tempDir('credentials-access'), 'access.log');
      writeFileSync(accessLog, '');
      const n = await node({ coreAccessLog: accessLog, tunnelPort, reportIntervalS: 1 });
      return { n, accessLog };
    }

    it('reports each user’s bytes with its devices’ share, and the devices online', async () => {
      const { n, accessLog } = await accessNode();
      const user = randomUUID();
      const phone = credential(user);
      const laptop = credential(user);
      n.service.upsert(phone);
      n.service.upsert(laptop);
      await n.nudgeNow();
      await until(() => n.core.users.size === 2, 2_000, 'the devices');
      const session = `${user}.0`;
      n.core.users.set(session, { id: randomUUID(), flow: '' });
      n.core.carry(session, 100, 1_000);
      n.core.carry(emailOf(phone), 10, 20);
      n.core.carry(emailOf(laptop), 1, 2);
      await connect(accessLog, emailOf(phone));
      const connectedAt = Date.now();

      await until(
        () => n.service.reports.some((r) => r.entries.length > 0 && (r.online?.length ?? 0) > 0),
        5_000,
        'a report with the bytes and the device online',
      );
      const report = n.service.reports.find((r) => r.entries.length > 0)!;
      expect(report.entries).toEqual([
        {
          user_id: user,
          bytes_up: 111,
          bytes_down: 1_022,
          devices: expect.arrayContaining([
            { device_id: phone.device_id, bytes_up: 10, bytes_down: 20 },
            { device_id: laptop.device_id, bytes_up: 1, bytes_down: 2 },
          ]) as unknown,
        },
      ]);
      const online = n.service.reports.find((r) => (r.online?.length ?? 0) > 0)!.online!;
      expect(online).toEqual([
        { device_id: phone.device_id, address: '127.0.0.1', since: expect.any(String) as unknown },
      ]);
      expect(Math.abs(Date.parse(online[0].since) - connectedAt)).toBeLessThan(2_000);
      // The journal holds the bytes' report, never an address.
      expect(readFileSync(path.join(n.settings.journalDir, JOURNAL_FILE), 'utf8')).not.toContain(
        '127.0.0.1',
      );

      // Counted once: the next reports carry only what moved since.
      n.core.carry(emailOf(laptop), 5, 5);
      await until(
        () => n.service.reports.filter((r) => r.entries.length > 0).length >= 2,
        5_000,
        'the next report with bytes',
      );
      expect(n.service.reports.filter((r) => r.entries.length > 0)[1].entries).toEqual([
        {
          user_id: user,
          bytes_up: 5,
          bytes_down: 5,
          devices: [{ device_id: laptop.device_id, bytes_up: 5, bytes_down: 5 }],
        },
      ]);
    });

    it('closes the connections of devices the answer names in close, and of over-limit users', async () => {
      const { n, accessLog } = await accessNode();
      const user = randomUUID();
      const elsewhere = credential();
      const overUser = credential(user);
      const bystander = credential();
      for (const device of [elsewhere, overUser, bystander]) n.service.upsert(device);
      await n.nudgeNow();
      await until(() => n.core.users.size === 3, 2_000, 'the devices');
      const a = await connect(accessLog, emailOf(elsewhere));
      const b = await connect(accessLog, emailOf(overUser), '127.0.0.2');
      const c = await connect(accessLog, emailOf(bystander), '127.0.0.3');
      await until(
        () => n.service.reports.some((r) => (r.online?.length ?? 0) === 3),
        5_000,
        'all three online',
      );
      n.service.close = [elsewhere.device_id];
      n.service.overLimit = [user];
      const asked = Date.now();
      const closedAt = await Promise.all([a.closed, b.closed]);
      for (const at of closedAt) expect(at - asked).toBeLessThan(3_000);
      expect(c.socket.destroyed).toBe(false);
      // Closing connections does not remove the credential: the service sends a removal for that.
      expect(n.core.users.size).toBe(3);
    });

    it('one address per device: a connection from a new address closes those from the old one', async () => {
      const { n, accessLog } = await accessNode();
      const device = credential();
      n.service.upsert(device);
      await n.nudgeNow();
      await until(() => n.core.users.size === 1, 2_000, 'the device');
      const wifi = [
        await connect(accessLog, emailOf(device), '127.0.0.1'),
        await connect(accessLog, emailOf(device), '127.0.0.1'),
      ];
      await sleep(1_500);
      expect(wifi.every((each) => !each.socket.destroyed)).toBe(true);
      const mobile = await connect(accessLog, emailOf(device), '127.0.0.2');
      const movedAt = Date.now();
      for (const closedAt of await Promise.all(wifi.map((each) => each.closed))) {
        expect(closedAt - movedAt).toBeLessThan(2_500);
      }
      expect(mobile.socket.destroyed).toBe(false);
      await until(
        () => n.lines.some((l) => l.event === 'device_address_switched'),
        1_000,
        'the switch logged',
      );
      expect(n.lines).toContainEqual(
        expect.objectContaining({
          event: 'device_address_switched',
          device_id: device.device_id,
          connections_closed: 2,
          switches: 1,
        }),
      );
      // The removed device's open connection closes too.
      n.service.remove(device.device_id);
      await n.nudgeNow();
      const closedAt = await mobile.closed;
      expect(closedAt - movedAt).toBeLessThan(5_000);
      expect(n.core.users.size).toBe(0);
    });
  });
});
