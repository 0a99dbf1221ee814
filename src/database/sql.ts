import type { DataSource, EntityManager } from 'typeorm';

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
