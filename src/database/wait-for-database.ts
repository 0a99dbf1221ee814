import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { type ConnectionOptions, sessionParameters } from './data-source';

/** At start, how often an unreachable database is tried again, each failure logged with its reason. */
export const STARTUP_RETRY_MS = 3_000;

/** Where the wait's lines go: the caller's logger, so they take the process's format (JSON). */
export interface WaitLog {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * Waits until the database at `url` accepts a connection opened as the pool opens its own (the same
 * session parameters: a pooler that refuses one is seen here) and answers a query. While it cannot,
 * logs why at warn every `STARTUP_RETRY_MS`; after `waitS` seconds throws with the last reason, so
 * that the process exits non-zero and a supervisor starts it again. `name` says which database in
 * the log (never its password).
 */
export async function waitForDatabase(
  url: string,
  name: string,
  connection: ConnectionOptions,
  waitS: number,
  log: WaitLog,
): Promise<void> {
  const deadline = Date.now() + waitS * 1000;
  for (let attempt = 1; ; attempt++) {
    const reason = await probe(url, connection);
    if (reason === null) {
      if (attempt > 1) log.info(`${name}: reachable after ${attempt} tries`);
      return;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new Error(`${name}: still unreachable after ${waitS} s: ${reason}`);
    }
    log.warn(
      `${name}: cannot connect (${reason}); trying again for up to ${Math.ceil(left / 1000)} s`,
    );
    await sleep(Math.min(STARTUP_RETRY_MS, left));
  }
}

/** Null when a connection opened and answered; else why not. */
async function probe(url: string, connection: ConnectionOptions): Promise<string | null> {
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: STARTUP_RETRY_MS,
    ...sessionParameters(connection),
  });
  // A server that drops the connection after it opened reports here too; the query below fails.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return reasonOf(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** An error's message; Node's connection errors to several addresses (AggregateError) have none. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  if (error.message) return error.message;
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map(reasonOf))].join('; ');
  }
  return typeof code === 'string' ? code : error.name;
}
