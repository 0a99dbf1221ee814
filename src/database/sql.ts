import { createHash } from 'node:crypto';
import { type DataSource, type EntityManager, QueryFailedError } from 'typeorm';
import { type Uuid, writeUuidBytes } from '../common/uuid';
import { PipelinedClient } from './pipelined-client';

/**
 * Runs one SQL statement and returns its rows. TypeORM answers `UPDATE … RETURNING` and
 * `DELETE … RETURNING` with `[rows, affectedCount]` but `SELECT` and `INSERT` with the rows alone.
 */
export async function sqlRows<T>(
  runner: DataSource | EntityManager,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const result: unknown = await runner.query(sql, params);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

/**
 * Marks a data source's options: its connections go through a transaction-mode pooler, where a
 * named statement prepared on one server connection is missing, or already there, on the next
 * (`prepared statement "…" already exists`). A symbol, so TypeORM and pg never read it; it
 * survives the copies TypeORM's Nest module makes of the options.
 */
const UNNAMED_STATEMENTS = Symbol('unnamedStatements');

export function withoutNamedStatements<T extends object>(options: T): T {
  return Object.assign(options, { [UNNAMED_STATEMENTS]: true });
}

function namedStatementsAllowed(runner: DataSource | EntityManager): boolean {
  const options = 'manager' in runner ? runner.options : runner.connection.options;
  return !(options as { [UNNAMED_STATEMENTS]?: boolean })[UNNAMED_STATEMENTS];
}

/** Names given so far, by statement: the statements are constants of the code, so few. */
const statementNames = new Map<string, string>();

/**
 * The name a statement is prepared under: derived from its text (96 bits of its SHA-256), so two
 * different statements never share a name, and one statement has the same name on every call and
 * every instance.
 */
export function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `q_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * Like `sqlRows`, as a named prepared statement: PostgreSQL parses and plans it once per
 * connection instead of on every call. For the statements every signed-in request or traffic batch
 * runs, where planning cost several times the execution; not for one whose best plan depends on
 * its parameters' size (PostgreSQL may settle on one generic plan). `sql` must be a constant text,
 * the parameters apart: its name comes from it (`statementName`), and each connection keeps every
 * statement it prepared. A data source behind a transaction pooler (`withoutNamedStatements`) runs
 * it unnamed.
 */
export function preparedRows<T>(
  runner: DataSource | EntityManager,
  sql: string,
  params: unknown[],
): Promise<T[]> {
  // Behind a pooler: an unnamed statement, parsed and planned on each call.
  if (!namedStatementsAllowed(runner)) return sqlRows<T>(runner, sql, params);
  // TypeORM hands its argument to pg's client.query unchanged, and pg takes a query config with
  // a name there; TypeORM's typings only know plain text.
  const query = { name: statementName(sql), text: sql };
  return sqlRows<T>(runner, query as unknown as string, params);
}

/** One statement of `pipelinedRows`: prepared (`preparedRows`) or not (`sqlRows`). */
export interface Statement {
  sql: string;
  params: unknown[];
  prepared: boolean;
}

/**
 * Writes `statements` one right behind the other on the connection of the transaction `tx`,
 * without waiting for each one's answer (the pool's clients are in pipeline mode,
 * `PipelinedClient`): one round trip for all of them. PostgreSQL still runs them one after the
 * other, each planned once the one before it has run. Returns each one's outcome, in order: its
 * rows, or its failure as TypeORM reports one (`QueryFailedError`); once one fails the transaction
 * has failed, and those after it fail too. Only in a transaction: outside one, each would commit
 * on its own. Each statement's client deadline (`queryDeadlineMs`) runs from when it is written,
 * so it also covers the wait for the statements ahead of it.
 */
export async function pipelinedRows(
  tx: EntityManager,
  statements: Statement[],
): Promise<PromiseSettledResult<Record<string, unknown>[]>[]> {
  const runner = tx.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('pipelinedRows runs in a transaction only');
  const client = (await runner.connect()) as {
    query: (config: { name?: string; text: string; values: unknown[] }) => Promise<{
      rows: Record<string, unknown>[];
    }>;
  };
  const named = namedStatementsAllowed(tx);
  // Written in this order within this call, with no await between them.
  const answers = statements.map((statement) =>
    client.query(queryConfig(statement, named)).then(
      (result) => result.rows,
      (error: Error) => {
        throw new QueryFailedError(statement.sql, statement.params, error);
      },
    ),
  );
  return Promise.allSettled(answers);
}

/**
 * Writes `statements`, one right behind the other, on the connection of the transaction `tx`, and
 * returns once they are written: their answers are left to the transaction's next query
 * (`PipelinedClient.writeAhead`), which waits for them and fails with the first failure among
 * them. For a transaction's last writes, whose COMMIT then shares their round trip: should one
 * fail, so does the commit, and nothing of the transaction is kept. Only in a transaction whose
 * start has been answered (never as its first statement: a start that failed would leave them to
 * commit on their own), and only for statements whose rows nobody reads.
 */
export async function writtenAhead(tx: EntityManager, statements: Statement[]): Promise<void> {
  const runner = tx.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('writtenAhead runs in a transaction only');
  const client: unknown = await runner.connect();
  if (!(client instanceof PipelinedClient)) throw new Error('writtenAhead needs a PipelinedClient');
  const named = namedStatementsAllowed(tx);
  for (const statement of statements) client.writeAhead(queryConfig(statement, named));
}

/** What pg's client.query takes for `statement`: named when prepared and allowed (`named`). */
function queryConfig(
  { sql, params, prepared }: Statement,
  named: boolean,
): { name?: string; text: string; values: unknown[] } {
  return { ...(prepared && named ? { name: statementName(sql) } : {}), text: sql, values: params };
}

/** PostgreSQL's type oids of the array elements below (`pg_type.oid`). */
const UUID_OID = 2950;
const INT8_OID = 20;
const TIMESTAMPTZ_OID = 1184;
/** PostgreSQL's epoch of its binary timestamps, 2000-01-01 UTC, in ms since the Unix epoch. */
const POSTGRES_EPOCH_MS = 946_684_800_000;
/** Array header: dimensions, has-nulls flag, element type, length, lower bound; int32 each. */
const HEADER_BYTES = 20;

/** A one-dimensional array of `count` elements of type `oid`, its header written. */
function binaryArray(oid: number, count: number, elementBytes: number): [Buffer, DataView] {
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + count * (4 + elementBytes));
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
  view.setInt32(0, 1);
  view.setInt32(4, 0);
  view.setInt32(8, oid);
  view.setInt32(12, count);
  view.setInt32(16, 1);
  return [buffer, view];
}

/**
 * A `uuid[]` parameter in PostgreSQL's binary format. node-postgres sends a Buffer parameter as
 * binary, so the server copies 16 bytes per element instead of parsing a text literal: for a
 * traffic report's 10,000 ids that parsing cost about 4 ms of the statement. The ids are `Uuid`,
 * canonical, checked where they entered.
 */
export function uuidArray(ids: readonly Uuid[]): Buffer {
  const [buffer, view] = binaryArray(UUID_OID, ids.length, 16);
  let at = HEADER_BYTES;
  for (const id of ids) {
    view.setInt32(at, 16);
    writeUuidBytes(id, buffer, at + 4);
    at += 20;
  }
  return buffer;
}

/**
 * A `bigint[]` parameter in PostgreSQL's binary format (see `uuidArray`). Numbers must be safe
 * integers, bigints within the signed 64-bit range; anything else throws.
 */
export function bigintArray(values: readonly (number | bigint)[]): Buffer {
  const [buffer, view] = binaryArray(INT8_OID, values.length, 8);
  let at = HEADER_BYTES;
  for (const value of values) {
    view.setInt32(at, 8);
    if (typeof value === 'bigint') {
      if (BigInt.asIntN(64, value) !== value) throw new RangeError('bigintArray: out of range');
      view.setBigInt64(at + 4, value);
    } else if (Number.isSafeInteger(value)) {
      const high = Math.floor(value / 0x1_0000_0000);
      view.setInt32(at + 4, high);
      view.setUint32(at + 8, value - high * 0x1_0000_0000);
    } else {
      throw new TypeError('bigintArray takes whole numbers only');
    }
    at += 12;
  }
  return buffer;
}

/**
 * A `timestamptz[]` parameter in PostgreSQL's binary format (see `uuidArray`): each date as its
 * microseconds since 2000-01-01 UTC, a null as a null element. pg's text form of a date (padded
 * fields and an offset, built for each element) was most of what a traffic batch's connection
 * writes allocated. An invalid date throws.
 */
export function timestamptzArray(dates: readonly (Date | null)[]): Buffer {
  const [buffer, view] = binaryArray(TIMESTAMPTZ_OID, dates.length, 8);
  let at = HEADER_BYTES;
  for (const date of dates) {
    if (date === null) {
      view.setInt32(4, 1);
      view.setInt32(at, -1);
      at += 4;
      continue;
    }
    const ms = date.getTime();
    if (!Number.isSafeInteger(ms)) throw new TypeError('timestamptzArray: an invalid date');
    view.setInt32(at, 8);
    view.setBigInt64(at + 4, BigInt(ms - POSTGRES_EPOCH_MS) * 1000n);
    at += 12;
  }
  return buffer.subarray(0, at);
}
