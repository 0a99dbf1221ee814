import { AdminRepository } from '../src/admin/admin.repository';
import { startTestApp, type TestApp } from './harness/app';
import { planOf } from './harness/billing-volume';

/**
 * The staff user list on 100,000 accounts: newest first, and filtered by role, read through its
 * index, never a scan and sort of the whole table.
 */
describe('staff user list on 100,000 users uses its indexes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await t.dataSource.query(
      `INSERT INTO users (seed_hash, created_at)
       SELECT md5(g::text), now() - make_interval(secs => g) FROM generate_series(1, 100000) g`,
    );
    await t.dataSource.query(
      `INSERT INTO users (username, role, created_at)
       SELECT 'partner' || g, 'partner', now() - make_interval(secs => g * 50)
         FROM generate_series(1, 2000) g`,
    );
    await t.dataSource.query('ANALYZE users');
  }, 120_000);
  afterAll(() => t.close());

  it.each([
    ['every account', {}, 'IDX_users_created'],
    ['?role=partner', { role: 'partner' as const }, 'IDX_users_role_created'],
  ])('%s', async (_name, filter, index) => {
    const [sql, params] = t.app
      .get(AdminRepository)
      .userPageQuery(filter, 51, null)
      .getQueryAndParameters();
    const plan = await planOf(t.dataSource, { name: _name, sql, params, index }, { analyze: true });
    expect(plan.nodes.join(' > ')).toContain(index);
    expect(
      plan.nodes.filter((node) => node.startsWith('Seq Scan') || node.startsWith('Sort')),
    ).toEqual([]);
    // A page is a few dozen index entries, not the table.
    expect(plan.executionMs).toBeLessThan(50);
  });
});
