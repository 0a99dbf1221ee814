/**
 * `npm run bench:routing`: GET /api/v1/nodes/routing (50 nodes, a fresh session token for each)
 * with a Bearer session, beside the reference server bench/reference/baseline-b.mjs, in the
 * same run on the same embedded PostgreSQL. The service runs as an operator runs it
 * (NODE_ENV=production, LOG_LEVEL=info, its log lines going to /dev/null); figures on stderr.
 */
import { AuthService } from '../src/auth/auth.service';
import { NodesService } from '../src/nodes/nodes.service';
import { startStandaloneApp } from '../scripts/lib/standalone-app';
import {
  BENCH,
  comparisonLines,
  type Figures,
  freePort,
  measure,
  median,
  silenceStdout,
  startBaselineB,
} from './lib/load';
import { utils } from 'ssh2';
import { DataSource } from 'typeorm';

const DURATION_S = BENCH.durationS;
const CONNECTIONS = BENCH.connections;
const ROUNDS = BENCH.rounds;
const NODES = 50;
const LOG_LEVEL = BENCH.logLevel;
const TARGET_RPS = 2235;
const TARGET_RATIO = 0.4;

async function main(): Promise<void> {
  silenceStdout();
  const standalone = await startStandaloneApp({
    logLevel: LOG_LEVEL,
    postgresFlags: ['-c', 'max_connections=200'],
  });
  let baseline: { url: string; stop(): void } | undefined;
  try {
    const { app } = standalone;
    await app.listen(0, '127.0.0.1');
    const owner = (await app.get(AuthService).createSeedAccount()).user;
    const sshKey = utils.generateKeyPairSync('ed25519').private;
    for (let i = 0; i < NODES; i++) {
      await app.get(NodesService).create(owner.id, {
        name: `node-${String(i).padStart(2, '0')}`,
        host: `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        ssh_private_key: sshKey,
        sni_domain: 'www.example.com',
      });
    }
    const pg = app.get(DataSource);
    await pg.query(`UPDATE nodes SET status = 'online', provision_state = 'ready'`);
    const { user, session } = await app.get(AuthService).createSeedAccount();
    await pg.query(
      `UPDATE users SET plan_name = 'monthly', subscription_expires_at = now() + interval '30 days'
        WHERE id = $1`,
      [user.id],
    );
    await pg.query(`CREATE DATABASE bench_baseline_b`);
    const baselineDb = new URL(standalone.databaseUrl);
    baselineDb.pathname = '/bench_baseline_b';
    baseline = await startBaselineB(baselineDb.toString(), await freePort());

    const headers = { authorization: `Bearer ${session.accessToken}` };
    const serviceUrl = `${await app.getUrl()}/api/v1/nodes/routing`;
    const check = await fetch(serviceUrl, { headers });
    const entries = (await check.json()) as unknown[];
    if (check.status !== 200 || entries.length !== NODES) {
      throw new Error(`routing answered ${check.status} with ${entries.length} nodes`);
    }

    const serviceRounds: Figures[] = [];
    const baselineRounds: Figures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const common = { connections: CONNECTIONS, durationS: DURATION_S };
      serviceRounds.push(await measure({ ...common, url: serviceUrl, headers }));
      baselineRounds.push(await measure({ ...common, url: baseline.url }));
    }
    const service = median(serviceRounds);
    const base = median(baselineRounds);
    const ratio = service.rps / base.rps;
    process.stderr.write(
      [
        '',
        `GET /api/v1/nodes/routing (${NODES} nodes, a fresh token each), Bearer session, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${DURATION_S} s, service LOG_LEVEL=${LOG_LEVEL}`,
        ...comparisonLines(serviceRounds, baselineRounds),
        `service / baseline: ${(ratio * 100).toFixed(0)}% (target ≥ ${TARGET_RATIO * 100}%); service ${service.rps.toFixed(0)} req/s (target ≥ ${TARGET_RPS})`,
        '',
      ].join('\n'),
    );
  } finally {
    baseline?.stop();
    await standalone.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
