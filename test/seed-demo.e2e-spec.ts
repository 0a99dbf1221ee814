import { DEMO_PLANS, runSeedDemo } from '../src/billing/seed-demo.command';
import { startTestApp, type TestApp } from './harness/app';

describe('seed:demo', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('loads the demo plans, and running it again changes nothing', async () => {
    await t.http().get('/api/v1/plans').expect(200, []);
    const url = (t.dataSource.options as { url: string }).url;
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await runSeedDemo(t.settings, url)).toBe(0);
      expect(await runSeedDemo(t.settings, url)).toBe(0);
    } finally {
      write.mockRestore();
    }
    const plans = await t.http().get('/api/v1/plans').expect(200);
    expect(plans.body.map((p: { name: string }) => p.name).sort()).toEqual(
      DEMO_PLANS.map((p) => p.name).sort(),
    );
    const monthly = plans.body.find((p: { name: string }) => p.name === 'monthly');
    expect(monthly).toMatchObject({
      duration_days: 30,
      prices: { USD: '499', EUR: '459', RUB: '45000' },
    });
    const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM plan_prices');
    expect(n).toBe(9);
  });
});
