// A throw-away PostgreSQL database: on the server of TEST_DATABASE_URL when set, else on an
// embedded server in a temporary folder that is deleted afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { requireTs } from './typescript.mjs';

export const FAST_TEST_FLAGS = [
  '-c',
  'fsync=off',
  '-c',
  'synchronous_commit=off',
  '-c',
  'full_page_writes=off',
  '-c',
  'max_connections=300',
];

/** Starts (or reaches) a server; returns its admin URL and a stop function. */
export async function startTestServer() {
  const given = process.env.TEST_DATABASE_URL;
  if (given) return { adminUrl: given, stop: async () => {} };
  const { startEmbeddedPostgres } = requireTs('src/database/embedded-postgres.ts');
  const dir = mkdtempSync(join(tmpdir(), 'vpn-service-pg-'));
  let server;
  try {
    server = await startEmbeddedPostgres({ dir, persistent: false, flags: FAST_TEST_FLAGS });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  // The cluster goes with the server; the folder also holds its credentials.
  const stop = () => server.stop().finally(() => rmSync(dir, { recursive: true, force: true }));
  return { adminUrl: server.url, stop };
}

export function databaseUrl(adminUrl, name) {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(adminUrl, sql) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function withTempDatabase(prefix, work) {
  const server = await startTestServer();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  try {
    await adminQuery(server.adminUrl, `CREATE DATABASE "${name}"`);
    return await work(databaseUrl(server.adminUrl, name));
  } finally {
    await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(
      () => {},
    );
    await server.stop();
  }
}
