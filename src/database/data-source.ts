import 'reflect-metadata';
import { type DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { loadMigrations } from './migrations';
import { SnakeNamingStrategy } from './naming-strategy';

/**
 * How long a query of the one-off commands and the CLI waits for a connection; the service's own
 * wait is DB_POOL_WAIT_MS.
 */
const DEFAULT_POOL_WAIT_MS = 30_000;
/**
 * A session left idle inside a transaction this long is ended by the server, freeing its locks.
 * Longer than any job's time bound (scheduler/intervals.ts): a job's lock transaction sits idle
 * while the job works on other connections.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 300_000;

/**
 * The one definition of the database connection, used by the app, the tests and the TypeORM CLI.
 * The pool heals by itself after a PostgreSQL restart: connections the server ended are dropped,
 * new ones are tried on the next query; keep-alive finds connections a network cut left dead.
 * `statementTimeoutMs` (the service's DB_STATEMENT_TIMEOUT_MS) bounds every statement; the CLI
 * leaves it unset so that long migrations can finish. `poolWaitMs` (DB_POOL_WAIT_MS) bounds a
 * query's wait for a connection: a free one from the pool (a burst of traffic reports queues here
 * instead of failing; statements held by a lock keep every connection busy) or a new one from a
 * server that does not answer (a network cut; a stopped server refuses at once). Past it the query
 * fails, and the request is answered 503, instead of waiting out the lock.
 */
export function dataSourceOptions(
  url: string,
  extra: Partial<DataSourceOptions> = {},
  {
    statementTimeoutMs = 0,
    poolWaitMs = DEFAULT_POOL_WAIT_MS,
  }: { statementTimeoutMs?: number; poolWaitMs?: number } = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: loadMigrations(),
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    namingStrategy: new SnakeNamingStrategy(),
    uuidExtension: 'pgcrypto',
    synchronize: false,
    migrationsRun: false,
    extra: {
      max: 20,
      connectionTimeoutMillis: poolWaitMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
    },
    ...extra,
  } as DataSourceOptions;
}
