/**
 * `npm run bench:validate`: POST /api/v1/internal/validate with a fresh session token per request
 * (each validates once: a signature check, one INSERT of its id, one read of the user), 50
 * connections, beside the reference server bench/reference/baseline-b.mjs, in the same run
 * on the same embedded PostgreSQL. The service runs as an operator runs it (NODE_ENV=production,
 * LOG_LEVEL=info, its log lines going to /dev/null); figures on stderr.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils } from 'ssh2';
import { DataSource } from 'typeorm';
import { AuthService } from '../src/auth/auth.service';
import { NodesService } from '../src/nodes/nodes.service';
import { SessionTokens } from '../src/nodes/session-token';
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

const DURATION_S = BENCH.durationS;
const CONNECTIONS = BENCH.connections;
const ROUNDS = BENCH.rounds;
const LOG_LEVEL = BENCH.logLevel;
/** More tokens than any round can spend (checked after each round). */
const TOKENS_PER_SECOND = 8000;
const TARGET_RATIO = 0.5;

async function main(): Promise<void> {
  silenceStdout();
  const standalone = await startStandaloneApp({
    logLevel: LOG_LEVEL,
    postgresFlags: ['-c', 'max_connections=200'],
  });
  let baseline: { url: string; stop(): void } | undefined;
  try {
    const { app, settings } = standalone;
    await app.listen(0, '127.0.0.1');
    const auth = app.get(AuthService);
    const owner = (await auth.createSeedAccount()).user;
    const node = await app.get(NodesService).create(owner.id, {
      name: 'bench',
      host: '10.0.0.1',
      ssh_private_key: utils.generateKeyPairSync('ed25519').private,
      sni_domain: 'www.example.com',
    });
    const db = app.get(DataSource);
    const userIds: string[] = [];
    for (let i = 0; i < 100; i++) userIds.push((await auth.createSeedAccount()).user.id);
    await db.query(
      `UPDATE users SET plan_name = 'monthly', subscription_expires_at = now() + interval '30 days'
        WHERE id = ANY($1::uuid[])`,
      [userIds],
    );
    await db.query(`CREATE DATABASE bench_baseline_b`);
    const baselineDb = new URL(standalone.databaseUrl);
    baselineDb.pathname = '/bench_baseline_b';
    baseline = await startBaselineB(baselineDb.toString(), await freePort());

    const tokens = app.get(SessionTokens);
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    let file = 0;
    /** A file of `count` request bodies, each with a token never validated before. */
    const freshBodies = (count: number): string => {
      const path = join(tmpdir(), `bench-validate-${process.pid}-${file++}.jsonl`);
      const lines: string[] = [];
      for (let i = 0; i < count; i++) {
        const token = tokens.issue(userIds[i % userIds.length], node.id, expiresAt);
        lines.push(JSON.stringify({ token, node_id: node.id }));
      }
      writeFileSync(path, lines.join('\n'));
      return path;
    };
    const url = `${await app.getUrl()}/api/v1/internal/validate`;
    const check = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-internal-secret': settings.internalSecret },
      body: JSON.stringify({
        token: tokens.issue(userIds[0], node.id, expiresAt),
        node_id: node.id,
      }),
    });
    const answer = (await check.json()) as { valid?: boolean };
    if (answer.valid !== true) throw new Error(`validate answered ${JSON.stringify(answer)}`);

    const serviceRounds: Figures[] = [];
    const baselineRounds: Figures[] = [];
    const headers = {
      'content-type': 'application/json',
      'x-internal-secret': settings.internalSecret,
    };
    for (let round = 0; round < ROUNDS; round++) {
      const common = { connections: CONNECTIONS, durationS: DURATION_S };
      await measure(
        {
          ...common,
          durationS: 2,
          url,
          method: 'POST',
          headers,
          bodiesFile: freshBodies(2 * TOKENS_PER_SECOND),
        },
        false,
      );
      const count = DURATION_S * TOKENS_PER_SECOND;
      const figures = await measure(
        { ...common, url, method: 'POST', headers, bodiesFile: freshBodies(count) },
        false,
      );
      if (figures.requests > count)
        throw new Error('ran out of fresh tokens: raise TOKENS_PER_SECOND');
      serviceRounds.push(figures);
      baselineRounds.push(await measure({ ...common, url: baseline.url }));
    }
    const [{ spent }] = (await db.query(
      `SELECT count(*)::int AS spent FROM used_session_tokens`,
    )) as { spent: number }[];
    const service = median(serviceRounds);
    const base = median(baselineRounds);
    const ratio = service.rps / base.rps;
    process.stderr.write(
      [
        '',
        `POST /api/v1/internal/validate, a fresh token per request, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${DURATION_S} s, service LOG_LEVEL=${LOG_LEVEL}`,
        ...comparisonLines(serviceRounds, baselineRounds),
        `token ids spent: ${spent} (every request validated a new token once)`,
        `service / baseline: ${(ratio * 100).toFixed(0)}% (target ≥ ${TARGET_RATIO * 100}%)`,
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
