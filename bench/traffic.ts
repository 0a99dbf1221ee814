/**
 * `npm run bench:traffic`: POST /api/v1/internal/traffic with 10,000-entry reports, one after
 * another and 50 at once (50 nodes, the same 10,000 users), beside a bare `pg` client running the
 * same `UPDATE … FROM unnest` on the same users in the same run. Entries per second. The service
 * runs in this process as an operator runs it (NODE_ENV=production, LOG_LEVEL=info, its log lines
 * going to /dev/null); the reports are sent from a worker thread, off the service's event loop.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { utils } from 'ssh2';
import { AuthService } from '../src/auth/auth.service';
import { NodesService } from '../src/nodes/nodes.service';
import { startStandaloneApp } from '../scripts/lib/standalone-app';
import { BENCH, silenceStdout } from './lib/load';

const ENTRIES = 10_000;
const SEQUENTIAL = Number(process.env.BENCH_REPORTS ?? 20);
const CONCURRENT = 50;
const LOG_LEVEL = BENCH.logLevel;

/** Sends reports from a worker thread: all given at once, each timed, and the whole. */
class ReportSender {
  private readonly worker: Worker;

  constructor(url: string, secret: string) {
    this.worker = new Worker(SENDER, { eval: true, workerData: { url, secret } });
  }

  send(payloads: string[]): Promise<{ eachMs: number[]; allMs: number }> {
    return new Promise((resolve, reject) => {
      const failed = (error: Error): void => reject(error);
      this.worker.once('error', failed);
      this.worker.once('message', (answer: { eachMs: number[]; allMs: number; error?: string }) => {
        this.worker.off('error', failed);
        if (answer.error) reject(new Error(answer.error));
        else resolve(answer);
      });
      this.worker.postMessage(payloads);
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

const SENDER = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.on('message', async (payloads) => {
  const started = performance.now();
  try {
    const eachMs = await Promise.all(payloads.map(async (payload) => {
      const sent = performance.now();
      const response = await fetch(workerData.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-secret': workerData.secret },
        body: payload,
      });
      await response.text();
      if (response.status !== 200) throw new Error('report answered ' + response.status);
      return performance.now() - sent;
    }));
    parentPort.postMessage({ eachMs, allMs: performance.now() - started });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
});
`;

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  silenceStdout();
  const standalone = await startStandaloneApp({
    logLevel: LOG_LEVEL,
    postgresFlags: ['-c', 'max_connections=200'],
  });
  const bare = new Client({ connectionString: standalone.databaseUrl });
  let sender: ReportSender | undefined;
  try {
    const { app, settings } = standalone;
    await app.listen(0, '127.0.0.1');
    const url = `${await app.getUrl()}/api/v1/internal/traffic`;
    const db = app.get(DataSource);
    const rows = (await db.query(
      `INSERT INTO users (seed_hash) SELECT md5(g::text) FROM generate_series(1, $1) g RETURNING id`,
      [ENTRIES],
    )) as { id: string }[];
    const ids = rows.map((row) => row.id);
    const owner = (await app.get(AuthService).createSeedAccount()).user;
    const sshKey = utils.generateKeyPairSync('ed25519').private;
    const nodes: string[] = [];
    for (let i = 0; i < CONCURRENT; i++) {
      const node = await app.get(NodesService).create(owner.id, {
        name: `node-${i}`,
        host: '10.0.0.1',
        ssh_private_key: sshKey,
        sni_domain: 'www.example.com',
      });
      nodes.push(node.id);
    }
    await db.query('ANALYZE users');

    const body = (node: string, shift: number): string =>
      JSON.stringify({
        node_id: node,
        report_id: randomUUID(),
        entries: ids.map((_, i) => ({
          user_id: ids[(i + shift) % ids.length],
          bytes_up: 1000 + i,
          bytes_down: 50_000 + i,
        })),
      });
    // The node's side, on a thread of its own so that sending 1 MB bodies never runs on the
    // service's event loop (a proxy sends from another machine).
    const reports = new ReportSender(url, settings.internalSecret);
    sender = reports;
    const post = async (payload: string): Promise<number> =>
      (await reports.send([payload])).eachMs[0];

    // Warm-up: JIT, pools, the users' pages in cache.
    for (let i = 0; i < 3; i++) await post(body(nodes[0], i));

    await bare.connect();
    const bareOnce = async (shift: number): Promise<number> => {
      const order = ids.map((_, i) => ids[(i + shift) % ids.length]);
      const started = performance.now();
      await bare.query('BEGIN');
      await bare.query(
        `UPDATE users u SET traffic_used_bytes = LEAST(u.traffic_used_bytes::numeric + v.bytes,
           9223372036854775807)::bigint
           FROM unnest($1::uuid[], $2::numeric[]) AS v(id, bytes) WHERE u.id = v.id`,
        [order, order.map((_, i) => String(51_000 + 2 * i))],
      );
      await bare.query('COMMIT');
      return performance.now() - started;
    };
    for (let i = 0; i < 3; i++) await bareOnce(i);

    const serviceMs: number[] = [];
    const bareMs: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const payload = body(nodes[i % nodes.length], i * 7);
      serviceMs.push(await post(payload));
      bareMs.push(await bareOnce(i * 7));
    }
    const payloads = nodes.map((node, n) => body(node, n * 200));
    const concurrentMs = (await reports.send(payloads)).allMs;

    const service = median(serviceMs);
    const bareMedian = median(bareMs);
    const rate = (ms: number): string => ((ENTRIES / ms) * 1000).toFixed(0);
    process.stderr.write(
      [
        '',
        `POST /api/v1/internal/traffic, ${ENTRIES}-entry reports, service LOG_LEVEL=${LOG_LEVEL}; median of ${SEQUENTIAL} alternating runs`,
        '| path | ms per report | entries/s |',
        '|---|---|---|',
        `| service, one report at a time (HTTP, validation, transaction) | ${service.toFixed(1)} | ${rate(service)} |`,
        `| bare pg: the same UPDATE … FROM unnest in a transaction | ${bareMedian.toFixed(1)} | ${rate(bareMedian)} |`,
        `| service, ${CONCURRENT} reports at once from ${CONCURRENT} nodes (same users) | ${(concurrentMs / CONCURRENT).toFixed(1)} (all: ${concurrentMs.toFixed(0)}) | ${((CONCURRENT * ENTRIES * 1000) / concurrentMs).toFixed(0)} |`,
        `service / bare: ${((bareMedian / service) * 100).toFixed(0)}% (target ≥ 70%); one report ${service.toFixed(0)} ms (target ≤ 100 ms, ≥ 100,000 entries/s)`,
        '',
      ].join('\n'),
    );
  } finally {
    await sender?.close();
    await bare.end().catch(() => undefined);
    await standalone.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
