/**
 * `npm run bench:agent`: the node agent (`node agent/dist/agent.js`, NODE_ENV=production) in front
 * of the built service run as an operator runs it (see lib/fixture.ts), with a fake gRPC core in
 * this process.
 *
 * 1. Admission latency: POST /v1/sessions over TLS with a fresh session token each (the agent calls
 *    /internal/validate, adds the core user, writes its journal), one request at a time, beside a
 *    bare POST /internal/validate of a fresh token to the service, in alternating rounds.
 * 2. One report cycle over 10,000 sessions whose counters all moved: the agent's own time for the
 *    cycle (read counters, journal write, POST, journal write), its CPU time and resident memory,
 *    beside the bare POST /internal/traffic of a 10,000-entry report from this process.
 * 3. Device credentials, 8,000 on the node: a full set applied from a nudge, the whole set applied
 *    again after the core restarted, one change from the nudge to the core (20 times), and the
 *    agent's CPU and memory for a sync and for polls that find nothing new. The service's side is
 *    agent/test/fake-service.ts (the contract's wire shapes), the core a fake in its own process.
 *    `BENCH_AGENT_PARTS=credentials` runs this part alone (it needs neither the service nor
 *    PostgreSQL).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { join, resolve } from 'node:path';
import { emptyJournal, JOURNAL_FILE, type Session } from '../agent/src/journal';
import { nudgeMac } from '../agent/src/nudge';
import { FakeCore } from '../agent/test/fake-core';
import { FakeCoreProcess } from '../agent/test/fake-core-process';
import { FakeService } from '../agent/test/fake-service';
import {
  admit,
  selfSignedCert,
  spawnAgent,
  tempDir,
  type AgentProcess,
} from '../agent/test/helpers';
import { SERVICE_SECRETS, startFixture } from './lib/fixture';
import { freePort } from './lib/load';
import { loadAverage, peakRssMiB, processCpuUs } from './lib/processes';
import {
  benchNodeSecret,
  freshTokenBody,
  seedAccounts,
  seedDemoPlans,
  seedNodes,
  subscribe,
} from './lib/seed';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const PER_ROUND = Number(process.env.BENCH_AGENT_REQUESTS ?? 200);
const SESSIONS = 10_000;
const CYCLES = Number(process.env.BENCH_AGENT_CYCLES ?? 3);
const AGENT = resolve(__dirname, '..', 'agent', 'dist', 'agent.js');
const DEVICES = 8_000;
const PARTS = (process.env.BENCH_AGENT_PARTS ?? 'admission,report,credentials').split(',');

function post(
  url: string,
  body: string,
  options: https.RequestOptions,
): Promise<{ status: number; text: string }> {
  const send = url.startsWith('https:') ? https.request : http.request;
  return new Promise((done, fail) => {
    const request = send(url, { method: 'POST', ...options }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        done({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    request.on('error', fail);
    request.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const ms = (value: number): string => `${value.toFixed(2)} ms`;

async function main(): Promise<void> {
  if (PARTS.includes('admission') || PARTS.includes('report')) await sessionParts();
  if (PARTS.includes('credentials')) await credentialsPart();
}

async function sessionParts(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture();
  const core = new FakeCore('xray', 'vless-reality');
  let agent: AgentProcess | null = null;
  try {
    await seedDemoPlans(fixture.service.env);
    const [nodeId] = await seedNodes(fixture.sql, 1);
    const userIds = await seedAccounts(fixture.sql, SESSIONS);
    await subscribe(fixture.sql, userIds);
    await core.start();
    const tls = await selfSignedCert(fixture.dir);
    const admissionPort = await freePort();
    const agentEnv = (journalDir: string, reportIntervalS: number): Record<string, string> => ({
      NODE_ENV: 'production',
      VPN_API_URL: fixture.service.url,
      VPN_NODE_ID: nodeId,
      VPN_NODE_SECRET: benchNodeSecret(1),
      CORE_API: core.address,
      CORE_API_PREFIX: 'xray',
      CORE_INBOUND_TAG: 'vless-reality',
      ADMISSION_HOST: '127.0.0.1',
      ADMISSION_PORT: String(admissionPort),
      TLS_CERT: tls.cert,
      TLS_KEY: tls.key,
      JOURNAL_DIR: journalDir,
      REPORT_INTERVAL_S: String(reportIntervalS),
      LIMITS_INTERVAL_S: '3600',
    });

    // 1. Admission beside a bare validate.
    agent = spawnAgent(agentEnv(join(fixture.dir, 'journal-admission'), 3600), AGENT);
    await agent.waitFor('agent_started');
    const tlsAgent = new https.Agent({
      keepAlive: true,
      ca: tls.certPem,
      checkServerIdentity: () => undefined,
    });
    const httpAgent = new http.Agent({ keepAlive: true });
    const admission = `https://127.0.0.1:${admissionPort}/v1/sessions`;
    const validate = `${fixture.service.url}/internal/validate`;
    const admissionTimes: number[] = [];
    const validateTimes: number[] = [];
    let n = 0;
    const timed = async (
      run: () => Promise<{ status: number; text: string }>,
      expected: number,
    ) => {
      const started = process.hrtime.bigint();
      const answer = await run();
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
      if (answer.status !== expected) throw new Error(`answered ${answer.status}: ${answer.text}`);
      return elapsed;
    };
    const body = () =>
      JSON.parse(freshTokenBody(userIds[n++ % userIds.length], nodeId)) as { token: string };
    for (let round = 0; round <= ROUNDS; round += 1) {
      const warmUp = round === 0;
      for (let i = 0; i < PER_ROUND; i += 1) {
        const payload = JSON.stringify({ session_token: body().token });
        const t = await timed(
          () =>
            post(admission, payload, {
              agent: tlsAgent,
              headers: { 'content-type': 'application/json' },
            }),
          201,
        );
        if (!warmUp) admissionTimes.push(t);
      }
      for (let i = 0; i < PER_ROUND; i += 1) {
        const payload = JSON.stringify({ token: body().token, node_id: nodeId });
        const t = await timed(
          () =>
            post(validate, payload, {
              agent: httpAgent,
              headers: {
                'content-type': 'application/json',
                'x-internal-secret': SERVICE_SECRETS.INTERNAL_SECRET,
              },
            }),
          200,
        );
        if (!warmUp) validateTimes.push(t);
      }
    }
    const admissionRss = peakRssMiB(agent.child.pid!);
    await agent.stop();
    agent = null;
    admissionTimes.sort((a, b) => a - b);
    validateTimes.sort((a, b) => a - b);

    // 2. One report cycle over 10,000 sessions whose counters all moved.
    const journalDir = join(fixture.dir, 'journal-report');
    mkdirSync(journalDir, { recursive: true });
    const journal = emptyJournal();
    core.users.clear();
    core.counters.clear();
    const now = Date.now();
    journal.sessions = userIds.map((userId): Session => ({
      email: `${userId}.0`,
      userId,
      slot: 0,
      vlessId: randomUUID(),
      createdAt: now,
      lastActiveAt: now,
    }));
    for (const session of journal.sessions)
      core.users.set(session.email, { id: session.vlessId, flow: '' });
    writeFileSync(join(journalDir, JOURNAL_FILE), JSON.stringify(journal));
    const carryAll = () => {
      for (const session of journal.sessions) core.carry(session.email, 1_000, 50_000);
    };
    carryAll();
    agent = spawnAgent(agentEnv(journalDir, 2), AGENT);
    await agent.waitFor('agent_started');
    const pid = agent.child.pid!;
    const cycles: { ms: number; cpuMs: number }[] = [];
    let cpuBefore = processCpuUs(pid);
    let seen = -1;
    for (let cycle = 0; cycle < CYCLES; cycle += 1) {
      const line = await agent.waitFor(
        'report_cycle',
        (l) => l.delivered === true && agent!.lines.indexOf(l) > seen,
        60_000,
      );
      seen = agent.lines.indexOf(line);
      const cpuAfter = processCpuUs(pid);
      cycles.push({ ms: Number(line.ms), cpuMs: (cpuAfter - cpuBefore) / 1000 });
      carryAll();
      cpuBefore = processCpuUs(pid);
    }
    const statusText = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(statusText)?.[1] ?? NaN) / 1024;
    const reportPeak = peakRssMiB(pid);
    await agent.stop();
    agent = null;

    // The baseline: the same 10,000-entry report posted bare to the service.
    const entries = userIds.map((user_id) => ({ user_id, bytes_up: 1_000, bytes_down: 50_000 }));
    const bare: number[] = [];
    for (let i = 0; i < CYCLES; i += 1) {
      const payload = JSON.stringify({ node_id: nodeId, report_id: randomUUID(), entries });
      bare.push(
        await timed(
          () =>
            post(`${fixture.service.url}/internal/traffic`, payload, {
              agent: httpAgent,
              headers: {
                'content-type': 'application/json',
                'x-internal-secret': SERVICE_SECRETS.INTERNAL_SECRET,
              },
            }),
          200,
        ),
      );
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

    process.stdout.write(
      [
        '',
        `admission: POST /v1/sessions over TLS (keep-alive), a fresh token each, one at a time, ${ROUNDS} rounds of ${PER_ROUND} after a warm-up round, alternating with the bare validate`,
        `  agent admission      p50 ${ms(percentile(admissionTimes, 50))}  p99 ${ms(percentile(admissionTimes, 99))}  (${admissionTimes.length} requests; agent peak RSS ${admissionRss.toFixed(1)} MiB)`,
        `  bare /internal/validate p50 ${ms(percentile(validateTimes, 50))}  p99 ${ms(percentile(validateTimes, 99))}  (${validateTimes.length} requests)`,
        `  admission / validate at p50: ${(percentile(admissionTimes, 50) / percentile(validateTimes, 50)).toFixed(2)}×`,
        `report cycle over ${SESSIONS} sessions, every counter moved (fake core in the bench process):`,
        `  agent cycles: ${cycles.map((c) => ms(c.ms)).join(', ')}; agent CPU per cycle: ${cycles.map((c) => ms(c.cpuMs)).join(', ')}`,
        `  bare POST /internal/traffic of the same 10,000 entries: ${bare.map(ms).join(', ')}`,
        `  agent cycle / bare POST (medians): ${(median(cycles.map((c) => c.ms)) / median(bare)).toFixed(2)}×`,
        `  agent memory after the cycles: RSS ${rss.toFixed(1)} MiB, peak ${reportPeak.toFixed(1)} MiB`,
        `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores, shared machine)`,
        '',
      ].join('\n'),
    );
  } finally {
    await agent?.kill();
    await core.stop();
    await fixture.close();
  }
}

const sleep = (msToWait: number): Promise<void> =>
  new Promise((done) => setTimeout(done, msToWait));

async function credentialsPart(): Promise<void> {
  const loadBefore = loadAverage();
  const dir = tempDir('bench-credentials');
  const core = new FakeCoreProcess();
  const nodeId = randomUUID();
  const secret = randomUUID();
  const service = new FakeService(nodeId, secret);
  let agent: AgentProcess | null = null;
  const device = () => ({
    device_id: randomUUID(),
    user_id: randomUUID(),
    vless_id: randomUUID(),
    expires_at: null,
  });
  try {
    await core.start();
    await service.start();
    const tls = await selfSignedCert(dir);
    const port = await freePort();
    agent = spawnAgent(
      {
        NODE_ENV: 'production',
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
        JOURNAL_DIR: join(dir, 'journal'),
        REPORT_INTERVAL_S: '3600',
        LIMITS_INTERVAL_S: '3600',
        CREDENTIALS_POLL_S: '3600',
      },
      AGENT,
    );
    await agent.waitFor('agent_started');
    const pid = agent.child.pid!;
    const nudge = async (): Promise<void> => {
      const version = service.version;
      const answer = await admit(`https://127.0.0.1:${port}/v1/credentials/nudge`, tls, {
        node_id: nodeId,
        version,
        mac: nudgeMac(secret, nodeId, version),
      });
      if (answer.status !== 204) throw new Error(`nudge answered ${answer.status}`);
    };
    const coreHas = async (count: number, timeoutMs = 30_000): Promise<number> => {
      const started = process.hrtime.bigint();
      while ((await core.size()) !== count) {
        if (Number(process.hrtime.bigint() - started) / 1e6 > timeoutMs) {
          throw new Error(`the core never had ${count} users`);
        }
        await sleep(5);
      }
      return Number(process.hrtime.bigint() - started) / 1e6;
    };

    // A full set from a nudge: fetch (about 1.2 MB of JSON), journal, 8,000 AlterInbound calls.
    service.replaceAll(Array.from({ length: DEVICES }, device));
    let cpu = processCpuUs(pid);
    const fullStarted = process.hrtime.bigint();
    await nudge();
    await coreHas(DEVICES);
    const fullMs = Number(process.hrtime.bigint() - fullStarted) / 1e6;
    const fullCpuMs = (processCpuUs(pid) - cpu) / 1000;
    const synced = await agent.waitFor('credentials_synced');

    // The core restarts: the whole set again.
    const restores: { wallMs: number; agentMs: number; cpuMs: number }[] = [];
    for (let round = 0; round < 3; round += 1) {
      cpu = processCpuUs(pid);
      const seen = agent.lines.length;
      await core.restart();
      const wallMs = await coreHas(DEVICES);
      const line = await agent.waitFor(
        'credentials_restored',
        (l) => l.added === DEVICES && agent!.lines.indexOf(l) >= seen,
      );
      restores.push({ wallMs, agentMs: Number(line.ms), cpuMs: (processCpuUs(pid) - cpu) / 1000 });
    }

    // One change, from the nudge to the core, one at a time.
    const changes: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      service.upsert(device());
      const started = process.hrtime.bigint();
      await nudge();
      await coreHas(DEVICES + i + 1, 5_000);
      changes.push(Number(process.hrtime.bigint() - started) / 1e6);
      await sleep(50);
    }
    changes.sort((a, b) => a - b);

    // A nudge for a version the agent has costs no fetch at all; these are fetches whose answer
    // moves the version and changes nothing.
    cpu = processCpuUs(pid);
    const polls = 20;
    for (let i = 0; i < polls; i += 1) {
      const fetches = service.fetches.length;
      service.version += 1;
      await nudge();
      while (service.fetches.length === fetches) await sleep(2);
      await sleep(20);
    }
    const pollCpuMs = (processCpuUs(pid) - cpu) / 1000 / polls;
    const statusText = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(statusText)?.[1] ?? NaN) / 1024;
    const peak = peakRssMiB(pid);

    process.stdout.write(
      [
        '',
        `device credentials, ${DEVICES} devices (the built agent; fake core in its own process; fake service in the bench process):`,
        `  full set from a nudge to all in the core: ${ms(fullMs)} (agent's own: fetch ${ms(Number(synced.fetch_ms))}, whole sync ${ms(Number(synced.ms))}); agent CPU ${ms(fullCpuMs)}`,
        `  whole set again after a core restart (3 rounds), restart to all in the core: ${restores.map((r) => ms(r.wallMs)).join(', ')}; agent's own ${restores.map((r) => ms(r.agentMs)).join(', ')}; agent CPU ${restores.map((r) => ms(r.cpuMs)).join(', ')}`,
        `  one change, nudge to core (20): p50 ${ms(percentile(changes, 50))}, max ${ms(changes[changes.length - 1])}`,
        `  a fetch whose answer moves only the version (nothing to apply, the journal written): agent CPU ${ms(pollCpuMs)} each`,
        `  agent memory with ${DEVICES + 20} devices: RSS ${rss.toFixed(1)} MiB, peak ${peak.toFixed(1)} MiB`,
        `load average before: ${loadBefore}; after: ${loadAverage()}`,
        '',
      ].join('\n'),
    );
  } finally {
    await agent?.kill();
    await core.stop();
    await service.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
