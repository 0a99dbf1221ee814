// A copy of the benchmark reference server the project measures against (kept verbatim, so figures
// stay comparable with other measurements against the same reference).
// The reference server for hot-route benchmarks: bare node:http + a `pg` Pool (max 10) doing per
// request what GET /users/me needs at least: one indexed lookup of a session row by id (the
// revocation check), then one of the user row by id, and a JSON answer shaped like /users/me.
// A route of the service is compared with this server's requests per second in the same run, on
// the same PostgreSQL server, under the same load (50 connections).
//
//   DATABASE_URL=postgresql://…/<scratch database> PORT=<port> node ../shared/bench/baseline-b.mjs
//
// It needs the `pg` package resolvable from the working directory (run it from the project root).
// On start it creates, when missing, its own tables `bench_b_users` and `bench_b_sessions` (10,000
// rows each, uuid keys) in the given database: give it a scratch database, never a real one.
// Binds 127.0.0.1 only. Prints "baseline-b listening on 127.0.0.1:<port>" when ready; stops on
// SIGTERM/SIGINT.

import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.cwd(), 'package.json'));
const pg = require('pg');

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0 || !process.env.DATABASE_URL) {
  process.stderr.write('baseline-b: PORT and DATABASE_URL are required\n');
  process.exit(2);
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bench_b_users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  username text, seed_hash text, tg_id bigint, role text,
  can_manage_nodes boolean NOT NULL DEFAULT false,
  partner_code text, commission_percent numeric(5,2),
  traffic_limit_bytes bigint NOT NULL DEFAULT 107374182400,
  traffic_used_bytes bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS bench_b_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES bench_b_users(id),
  token_hash bytea NOT NULL,
  revoked_at timestamptz,
  expires_at timestamptz NOT NULL
);`;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, connectionTimeoutMillis: 5000 });
pool.on('error', (e) => process.stderr.write(`baseline-b pool error: ${e.message}\n`));

await pool.query(SCHEMA);
if ((await pool.query('SELECT count(*)::int AS n FROM bench_b_users')).rows[0].n === 0) {
  await pool.query(`INSERT INTO bench_b_users (seed_hash) SELECT md5(g::text) FROM generate_series(1, 10000) AS g`);
  await pool.query(`INSERT INTO bench_b_sessions (user_id, token_hash, expires_at)
    SELECT id, sha256(convert_to(id::text, 'UTF8')), now() + interval '30 days' FROM bench_b_users`);
  await pool.query('ANALYZE bench_b_users; ANALYZE bench_b_sessions;');
}
const sessionIds = (await pool.query('SELECT id::text AS id FROM bench_b_sessions')).rows.map((r) => r.id);

const SESSION_SQL = 'SELECT user_id, revoked_at, expires_at FROM bench_b_sessions WHERE id = $1';
const USER_SQL = `SELECT id, role, username, tg_id, can_manage_nodes, partner_code, commission_percent,
  traffic_limit_bytes, traffic_used_bytes, created_at FROM bench_b_users WHERE id = $1`;

function send(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function usersMe(res) {
  const sid = sessionIds[Math.floor(Math.random() * sessionIds.length)];
  const session = (await pool.query(SESSION_SQL, [sid])).rows[0];
  if (!session || session.revoked_at !== null || session.expires_at <= new Date()) {
    send(res, 401, { statusCode: 401, error: 'Unauthorized', code: 'UNAUTHENTICATED', message: 'session revoked' });
    return;
  }
  const u = (await pool.query(USER_SQL, [session.user_id])).rows[0];
  send(res, 200, {
    id: u.id,
    role: u.role,
    username: u.username,
    tg_id: u.tg_id === null ? null : Number(u.tg_id),
    can_manage_nodes: u.can_manage_nodes,
    partner_code: u.partner_code,
    commission_percent: u.commission_percent === null ? null : Number(u.commission_percent),
    subscription: null,
    traffic: { limit_bytes: Number(u.traffic_limit_bytes), used_bytes: Number(u.traffic_used_bytes) },
    created_at: u.created_at.toISOString(),
  });
}

const server = http.createServer((req, res) => {
  usersMe(res).catch((e) => {
    if (!res.headersSent) send(res, 500, { statusCode: 500, error: 'Internal Server Error', code: 'INTERNAL', message: e.message });
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`baseline-b listening on 127.0.0.1:${port}\n`));

const stop = () => {
  server.closeAllConnections?.();
  server.close(() => pool.end().finally(() => process.exit(0)));
  setTimeout(() => process.exit(0), 3000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
