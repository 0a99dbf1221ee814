import { DEMO_PLANS, runSeedDemo } from '../src/billing/seed-demo.command';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';

describe('seed:demo', () => {
  let t: TestApp;
  let url: string;

  /** Runs the command, returning its exit code and what it printed. */
  const seed = async (): Promise<{ code: number; out: string }> => {
    let out = '';
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    try {
      return { code: await runSeedDemo(t.settings, url), out };
    } finally {
      write.mockRestore();
    }
  };

  beforeAll(async () => {
    t = await startTestApp();
    url = (t.dataSource.options as { url: string }).url;
  });
  afterAll(() => t.close());

  it('loads the demo plans, and running it again changes nothing', async () => {
    await t.http().get('/api/v1/plans').expect(200, []);
    const first = await seed();
    expect(first.code).toBe(0);
    for (const plan of DEMO_PLANS) expect(first.out).toContain(`plan ${plan.name}: created`);
    const again = await seed();
    expect(again.code).toBe(0);
    for (const plan of DEMO_PLANS) expect(again.out).toContain(`plan ${plan.name}: kept`);

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

  it('leaves a plan the operator edited untouched', async () => {
    const owner = await newUser(t, 'owner');
    const edited = {
      duration_days: 31,
      traffic_limit_bytes: 5,
      prices: { USD: '599' },
      active: false,
    };
    await t.http().put('/api/v1/admin/plans/monthly').set(owner.bearer).send(edited).expect(200);
    await t.dataSource.query(`DELETE FROM plans WHERE name = 'yearly'`);

    const run = await seed();
    expect(run.code).toBe(0);

    const [row] = await t.dataSource.query(
      `SELECT duration_days, traffic_limit_bytes, active,
         (SELECT jsonb_object_agg(currency, amount_minor::text) FROM plan_prices
           WHERE plan_name = 'monthly') AS prices
       FROM plans WHERE name = 'monthly'`,
    );
    expect(row).toEqual({
      duration_days: 31,
      traffic_limit_bytes: '5',
      active: false,
      prices: { USD: '599' },
    });
    const [yearly] = await t.dataSource.query(
      `SELECT duration_days FROM plans WHERE name = 'yearly'`,
    );
    expect(yearly).toEqual({ duration_days: 365 });
    expect(run.out).toContain('plan monthly: kept');
    expect(run.out).toContain('plan yearly: created');
  });
});
