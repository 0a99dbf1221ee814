import { startTestApp, type TestApp } from './harness/app';
import { fillBilling, HOT_QUERIES, planOf } from './harness/billing-volume';
import { newUser, savePlan } from './harness/factories';

/**
 * The billing statements that run every minute or over tables that only grow, planned on 100,000
 * invoices (and as many charges and transfers): each reads through its index, never a scan of the
 * whole table. Figures with and without the indexes: `npm run bench:billing` (bench/RESULTS.md).
 */
describe('billing: hot queries on 100,000 rows use their indexes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    const owner = await newUser(t, 'owner');
    await savePlan(t, owner, { traffic_limit_bytes: 1 });
    await fillBilling(t.dataSource, owner.user.id, 100_000);
  }, 120_000);
  afterAll(() => t.close());

  it.each(HOT_QUERIES.map((query) => [query.name, query] as const))('%s', async (_name, query) => {
    const plan = await planOf(t.dataSource, query);
    expect(plan.nodes.join(' > ')).toContain(query.index);
    expect(plan.nodes.filter((node) => node.startsWith('Seq Scan'))).toEqual([]);
  });
});
