import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { sqlRows } from './sql';

/** Pages one slice of a walk reads: 2 MB at PostgreSQL's default page size, a few ms. */
export const WALK_SLICE_PAGES = 256;

/** After each slice a walk pauses this many times as long as the slice took. */
const PAUSE_PER_SLICE_TIME = 3;

/** Past the last page a table can have: the open end of a walk's last slice. */
const PAST_EVERY_PAGE = '(4294967295,0)';

/**
 * Runs `sql` over the whole of `table`, one slice of its pages at a time, and returns every
 * slice's rows: for aggregates over every row of a large table (the business metrics' counts of
 * accounts, devices and payments), which as one statement keep PostgreSQL busy on every core it
 * may use for a second or more at a million rows, and hold up the requests that share the machine.
 *
 * `sql` reads its slice through the row's place, `$1::tid <= t.ctid AND t.ctid < $2::tid` (a TID
 * range scan reads those pages and no others); the caller sums the slices' rows. The slices run one
 * at a time on one connection, each followed by a pause three times as long as it took, so the
 * walk keeps at most a quarter of one core busy (half of one still held up a fully loaded two-core
 * machine's requests, bench/RESULTS.md); all of them in one read-only snapshot, so the sums are
 * exactly those of one statement over the table, whatever is written meanwhile.
 */
export async function walkTablePages<Row>(
  dataSource: DataSource,
  table: string,
  sql: string,
  slicePages = WALK_SLICE_PAGES,
): Promise<Row[]> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.startTransaction('REPEATABLE READ');
    await runner.query('SET TRANSACTION READ ONLY');
    await runner.query('SET LOCAL max_parallel_workers_per_gather = 0');
    // The snapshot is taken by this first statement, before the table's size is read: a row the
    // snapshot sees is on a page that was there already.
    const [{ pages }] = await sqlRows<{ pages: string }>(
      runner.manager,
      `SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int AS pages`,
      [table],
    );
    const rows: Row[] = [];
    for (let first = 0; ; first += slicePages) {
      const end = first + slicePages;
      const last = end >= Number(pages);
      const started = performance.now();
      const slice = await sqlRows<Row>(runner.manager, sql, [
        `(${first},0)`,
        last ? PAST_EVERY_PAGE : `(${end},0)`,
      ]);
      rows.push(...slice);
      if (last) break;
      await sleep(PAUSE_PER_SLICE_TIME * (performance.now() - started));
    }
    await runner.commitTransaction();
    return rows;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  } finally {
    await runner.release();
  }
}

/**
 * A walk's rows summed over its slices: one row for each distinct value of the `keys` columns,
 * its `sums` columns (integers as text, as PostgreSQL answers `count` and `sum` of big numbers)
 * added up exactly.
 */
export function sumSlices<Row extends Record<string, string>>(
  rows: Row[],
  keys: (keyof Row)[],
  sums: (keyof Row)[],
): Row[] {
  const merged = new Map<string, Row>();
  for (const row of rows) {
    const key = JSON.stringify(keys.map((column) => row[column]));
    const into = merged.get(key);
    if (!into) {
      merged.set(key, { ...row });
      continue;
    }
    for (const column of sums) {
      into[column] = (BigInt(into[column]) + BigInt(row[column])).toString() as Row[keyof Row];
    }
  }
  return [...merged.values()];
}
