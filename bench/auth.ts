/**
 * `npm run bench:auth`: GET /api/v1/users/me with a cookie session, requests per second and p99
 * latency, on the real service and on a bare node:http + pg server doing the same queries, in the
 * same run against the same embedded PostgreSQL. Loopback only; stops by itself.
 */
import { execFile } from 'node:child_process';
import { createSecretKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import { Pool } from 'pg';
import { AuthService } from '../src/auth/auth.service';
import { startStandaloneApp } from '../scripts/lib/standalone-app';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** `silent` compares like with like (the baseline logs nothing); `info` shows the cost of a log line per request. */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'silent';

async function main(): Promise<void> {
  const standalone = await startStandaloneApp({
    logLevel: LOG_LEVEL,
    postgresFlags: ['-c', 'max_connections=200'],
  });
  try {
    const { app } = standalone;
    await app.listen(0, '127.0.0.1');
    const { session } = await app.get(AuthService).createSeedAccount();
    const cookie = `access_token=${session.accessToken}`;

    const bare = await startBareServer(standalone.databaseUrl, standalone.settings.jwtAccessSecret);
    const serviceUrl = `${await app.getUrl()}/api/v1/users/me`;
    const baselineUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/api/v1/users/me`;
    // Alternate the two servers over several rounds and keep each one's median round, so a noisy
    // moment of the machine does not land on one side only.
    const serviceRounds: Figures[] = [];
    const baselineRounds: Figures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      serviceRounds.push(await measure(serviceUrl, cookie));
      baselineRounds.push(await measure(baselineUrl, cookie));
    }
    const service = median(serviceRounds);
    const baseline = median(baselineRounds);
    const ratio = service.rps / baseline.rps;
    process.stdout.write(
      [
        '',
        `GET /api/v1/users/me, cookie session, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${DURATION_S} s, loopback, service LOG_LEVEL=${LOG_LEVEL}`,
        '| server | requests/s | p50 ms | p99 ms | errors |',
        '|---|---|---|---|---|',
        `| service (NestJS) | ${service.rps.toFixed(0)} | ${service.p50} | ${service.p99} | ${service.errors} |`,
        `| baseline (node:http + pg) | ${baseline.rps.toFixed(0)} | ${baseline.p50} | ${baseline.p99} | ${baseline.errors} |`,
        `service / baseline throughput: ${(ratio * 100).toFixed(0)}% (target: at least 50%)`,
        '',
      ].join('\n'),
    );
    await new Promise((resolve) => bare.close(resolve));
  } finally {
    await standalone.close();
  }
}

/** The round with the median throughput. */
function median(rounds: Figures[]): Figures {
  return [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)];
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Loads `url` from a separate process, so the load generator does not share the server's event loop. */
async function measure(url: string, cookie: string): Promise<Figures> {
  await autocannonProcess(url, cookie, 2); // warm-up: JIT and connection pools
  const result = await autocannonProcess(url, cookie, DURATION_S);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

function autocannonProcess(
  url: string,
  cookie: string,
  seconds: number,
): Promise<autocannon.Result> {
  const bin = join(__dirname, '..', 'node_modules', '.bin', 'autocannon');
  const args = [
    '-j',
    '-c',
    String(CONNECTIONS),
    '-d',
    String(seconds),
    '-H',
    `cookie=${cookie}`,
    url,
  ];
  return new Promise((resolve, reject) => {
    execFile(bin, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      if (error) reject(error);
      else resolve(JSON.parse(stdout) as autocannon.Result);
    });
  });
}

/** The same work without the framework: verify the JWT, check the session, read the user. */
function startBareServer(databaseUrl: string, jwtSecret: string): Promise<Server> {
  const pool = new Pool({ connectionString: databaseUrl, max: 20 });
  const key = createSecretKey(Buffer.from(jwtSecret, 'utf8'));
  const server = createServer((req, res) => {
    void (async () => {
      const token = /(?:^|;\s*)access_token=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      let claims: { sub: string; sid: string };
      try {
        claims = jwt.verify(token ?? '', key, { algorithms: ['HS256'] }) as typeof claims;
      } catch {
        res.writeHead(401).end();
        return;
      }
      const session = await pool.query(
        `SELECT u.id FROM refresh_sessions s JOIN users u ON u.id = s.user_id
          WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL`,
        [claims.sid, claims.sub],
      );
      if (session.rowCount === 0) {
        res.writeHead(401).end();
        return;
      }
      const { rows } = await pool.query(
        `SELECT u.*, (SELECT s.value #>> '{}' FROM app_settings s WHERE s.key = 'traffic_limit_default_bytes') AS default_limit
           FROM users u WHERE u.id = $1`,
        [claims.sub],
      );
      const u = rows[0];
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          id: u.id,
          role: u.role,
          username: u.username,
          tg_id: u.tg_id === null ? null : Number(u.tg_id),
          can_manage_nodes: u.can_manage_nodes,
          partner_code: u.partner_code,
          commission_percent: u.commission_percent === null ? null : Number(u.commission_percent),
          subscription: null,
          traffic: {
            limit_bytes: Number(u.traffic_limit_bytes ?? u.default_limit ?? 107374182400),
            used_bytes: Number(u.traffic_used_bytes),
          },
          created_at: u.created_at.toISOString(),
        }),
      );
    })().catch(() => res.writeHead(500).end());
  });
  server.on('close', () => void pool.end().catch(() => undefined));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

void main();
