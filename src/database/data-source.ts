import 'reflect-metadata';
import { type DataSourceOptions } from 'typeorm';
import { PipelinedClient } from './pipelined-client';
import { FAST_TIMESTAMPS } from './timestamps';
import { loadMigrations } from './migrations';
import { withoutNamedStatements } from './sql';
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
 * How much longer than `statement_timeout` the client waits for an answer before it gives up on
 * its own: the server's timeout, which also frees the server, fires first when the server can
 * answer; this one ends the wait when it cannot (stopped, frozen, a network cut). For statements
 * written together (`pipelinedRows`) it runs from when each was written, so a later one's includes
 * the time of those ahead of it, and it may end first.
 */
export const QUERY_DEADLINE_MARGIN_MS = 1_000;

/** The client-side deadline of each query: none when statements are not bounded (the CLI). */
export function queryDeadlineMs(statementTimeoutMs = 0): number | undefined {
  return statementTimeoutMs > 0 ? statementTimeoutMs + QUERY_DEADLINE_MARGIN_MS : undefined;
}

/** The entity classes a data source loads. */
export type EntityList = NonNullable<DataSourceOptions['entities']>;

/** What `DATABASE_URL` points at (the `DB_POOLER` setting). */
export type DbPooler = 'none' | 'pgbouncer';

export interface ConnectionOptions {
  /** The service's DB_STATEMENT_TIMEOUT_MS; 0 or unset: no bound (the CLI, so long migrations finish). */
  statementTimeoutMs?: number;
  /** `pgbouncer`: a transaction-mode pooler; see `sessionParameters` and `preparedRows`. */
  pooler?: DbPooler;
  /** Connections the pool opens at most. */
  poolSize?: number;
  /**
   * The longest a query waits for a connection (the service's DB_POOL_WAIT_MS; 30 s for the
   * one-off commands and the CLI).
   */
  poolWaitMs?: number;
}

/**
 * The parameters each connection sends when it opens, applying to its whole session. None through
 * a transaction-mode pooler: PgBouncer refuses the connection when it sees one it does not know,
 * and the session is not ours anyway (each transaction gets whichever server connection is free).
 * There the role's own settings bound statements (docs/operations.md, "Behind PgBouncer").
 */
export function sessionParameters({
  statementTimeoutMs = 0,
  pooler = 'none',
}: ConnectionOptions): Record<string, number> {
  if (pooler !== 'none') return {};
  return {
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
  };
}

/**
 * The one definition of the database connection, used by the app, the tests and the TypeORM CLI.
 * The pool heals by itself after a PostgreSQL restart: connections the server ended are dropped,
 * new ones are tried on the next query; keep-alive finds connections a network cut left dead.
 * `statementTimeoutMs` (the service's DB_STATEMENT_TIMEOUT_MS) bounds every statement; the CLI
 * leaves it unset so that long migrations can finish. `poolWaitMs` (DB_POOL_WAIT_MS) bounds a
 * query's wait for a connection: a free one from the pool (a burst of traffic reports queues here
 * instead of failing; statements held by a lock keep every connection busy) or a new one from a
 * server that does not answer (a network cut; a stopped server refuses at once). Past it the query
 * fails, and the request is answered 503, instead of waiting out the lock. A query already sent
 * ends at `queryDeadlineMs` whatever the server does (it is answered 503 too), and its connection
 * is closed (`DeadlineClient`), so a request waits at most DB_POOL_WAIT_MS for a connection plus
 * that deadline per statement. A transaction's first statement is written right behind its start
 * (`PipelinedClient`); `timestamptz` values are read by `FAST_TIMESTAMPS`. Behind a pooler
 * (`pooler`), the data source is marked so that `preparedRows` names no statement. `extra.entities`
 * says which entities it loads: the features' (src/entities.ts) or none (the app, whose feature
 * modules register their own; a connection that only locks or migrates).
 */
export function dataSourceOptions(
  url: string,
  extra: Partial<DataSourceOptions> & { entities: EntityList },
  connection: ConnectionOptions = {},
): DataSourceOptions {
  const options = {
    type: 'postgres',
    url,
    migrations: loadMigrations(),
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    namingStrategy: new SnakeNamingStrategy(),
    uuidExtension: 'pgcrypto',
    synchronize: false,
    migrationsRun: false,
    extra: {
      max: connection.poolSize ?? 20,
      connectionTimeoutMillis: connection.poolWaitMs ?? DEFAULT_POOL_WAIT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      Client: PipelinedClient,
      types: FAST_TIMESTAMPS,
      ...sessionParameters(connection),
      ...(queryDeadlineMs(connection.statementTimeoutMs) === undefined
        ? {}
        : { query_timeout: queryDeadlineMs(connection.statementTimeoutMs) }),
    },
    ...extra,
  } as DataSourceOptions;
  return connection.pooler && connection.pooler !== 'none'
    ? withoutNamedStatements(options)
    : options;
}
