import type { DataSource, EntityManager } from 'typeorm';
import type { Uuid } from '../common/uuid';

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
 * Like `sqlRows`, as a named prepared statement: PostgreSQL parses and plans it once per
 * connection instead of on every call. For the statements every signed-in request runs, where
 * planning cost several times the execution. `name` must be unique to this exact `sql`.
 */
export function preparedRows<T>(
  runner: DataSource | EntityManager,
  name: string,
  sql: string,
  params: unknown[],
): Promise<T[]> {
  // TypeORM hands its argument to pg's client.query unchanged, and pg takes a query config with
  // a name there; TypeORM's typings only know plain text.
  return sqlRows<T>(runner, { name, text: sql } as unknown as string, params);
}

/**
 * A PostgreSQL array literal (`{a,b,c}`) of canonical UUIDs or whole numbers, for a parameter
 * cast to `uuid[]`, `bigint[]` or `numeric[]`. Such values need no quoting, so the literal is one
 * join: the driver quotes and escapes each element of an array parameter, which costs more than
 * the join over a traffic report's 10,000 ids. UUIDs are `Uuid`, checked where they entered;
 * numbers must be safe integers (or bigints); anything else throws.
 */
export function arrayLiteral(values: readonly Uuid[] | readonly (number | bigint)[]): string {
  for (const value of values) {
    if (typeof value === 'string' || typeof value === 'bigint' || Number.isSafeInteger(value)) {
      continue;
    }
    throw new TypeError('arrayLiteral takes canonical UUIDs and whole numbers only');
  }
  return `{${values.join(',')}}`;
}
