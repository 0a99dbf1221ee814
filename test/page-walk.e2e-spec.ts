import { sumSlices, walkTablePages } from '../src/database/page-walk';
import { startTestApp, type TestApp } from './harness/app';

const ROWS = 20_000;

/** Counts and sums by group, the way the business metrics walk their tables. */
const COUNT_SQL = `SELECT w.grp, count(*) AS n, sum(w.amount)::text AS amount FROM walk_check w
                    WHERE $1::tid <= w.ctid AND w.ctid < $2::tid GROUP BY w.grp`;

describe('walkTablePages: a whole table counted a slice of pages at a time', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await t.dataSource.query(
      `CREATE TABLE walk_check (id int PRIMARY KEY, grp text NOT NULL, amount bigint NOT NULL,
                                pad text NOT NULL)`,
    );
    // Amounts past 2^53, so a sum that went through a float would be off.
    await t.dataSource.query(
      `INSERT INTO walk_check
       SELECT g, 'g' || (g % 3), 4503599627370497 + g, repeat('x', 100)
         FROM generate_series(1, $1::int) g`,
      [ROWS],
    );
  });
  afterAll(() => t.close());

  const oneStatement = async () =>
    (await t.dataSource.query(
      `SELECT grp, count(*) AS n, sum(amount)::text AS amount FROM walk_check GROUP BY grp
        ORDER BY grp`,
    )) as { grp: string; n: string; amount: string }[];

  const byGroup = (rows: { grp: string; n: string; amount: string }[]) =>
    [...rows].sort((a, b) => a.grp.localeCompare(b.grp));

  it('sums over its slices what one statement over the table answers', async () => {
    const slices = await walkTablePages<{ grp: string; n: string; amount: string }>(
      t.dataSource,
      'walk_check',
      COUNT_SQL,
      16,
    );
    // 20,000 rows of about 150 bytes fill some 400 pages: many slices, each with every group.
    expect(slices.length).toBeGreaterThan(3 * 20);
    expect(byGroup(sumSlices(slices, ['grp'], ['n', 'amount']))).toEqual(await oneStatement());
  });

  it('counts every row once while rows move to other pages under it', async () => {
    const before = await oneStatement();
    let walking = true;
    let moved = 0;
    // Each update writes new versions of 500 rows at the table's end: a walk without its one
    // snapshot meets them again in a later slice, or misses them.
    const mover = (async () => {
      for (let round = 0; walking; round++) {
        const first = (round * 500) % ROWS;
        const result = (await t.dataSource.query(
          `UPDATE walk_check SET pad = repeat(chr(97 + $3::int % 26), 100)
            WHERE id > $1 AND id <= $2`,
          [first, first + 500, round],
        )) as [unknown, number];
        moved += result[1];
      }
    })();
    const slices = await walkTablePages<{ grp: string; n: string; amount: string }>(
      t.dataSource,
      'walk_check',
      COUNT_SQL,
      4,
    );
    walking = false;
    await mover;

    expect(moved).toBeGreaterThan(1_000);
    expect(byGroup(sumSlices(slices, ['grp'], ['n', 'amount']))).toEqual(before);
  });

  it('leaves nothing open when a slice fails, and says why', async () => {
    await expect(
      walkTablePages(t.dataSource, 'walk_check', `SELECT no_such_column FROM walk_check`),
    ).rejects.toThrow(/no_such_column/);
    const [{ open }] = (await t.dataSource.query(
      `SELECT count(*)::int AS open FROM pg_stat_activity
        WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
    )) as { open: number }[];
    expect(open).toBe(0);
  });
});
