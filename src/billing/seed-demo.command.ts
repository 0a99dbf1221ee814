import { DataSource } from 'typeorm';
import { type Settings } from '../config/settings';
import { dataSourceOptions } from '../database/data-source';
import { BillingRepository, type PlanRecord } from './billing.repository';

const GIB = 1024 ** 3;

/** Example plans for a new installation; prices in minor units of each currency. */
export const DEMO_PLANS: PlanRecord[] = [
  {
    name: 'monthly',
    durationDays: 30,
    trafficLimitBytes: String(100 * GIB),
    active: true,
    prices: { USD: '499', EUR: '459', RUB: '45000' },
  },
  {
    name: 'quarterly',
    durationDays: 90,
    trafficLimitBytes: String(300 * GIB),
    active: true,
    prices: { USD: '1299', EUR: '1199', RUB: '119000' },
  },
  {
    name: 'yearly',
    durationDays: 365,
    trafficLimitBytes: String(1200 * GIB),
    active: true,
    prices: { USD: '4499', EUR: '4199', RUB: '399000' },
  },
];

/**
 * `node dist/src/main.js --seed-demo` (`npm run seed:demo`): creates or replaces the demo plans and
 * exits. Running it again changes nothing further. Returns the exit code.
 */
export async function runSeedDemo(settings: Settings, databaseUrl: string): Promise<number> {
  const dataSource = new DataSource(
    dataSourceOptions(databaseUrl, { migrationsRun: settings.migrationsRun }),
  );
  await dataSource.initialize();
  try {
    const billing = new BillingRepository(dataSource);
    for (const plan of DEMO_PLANS) {
      await billing.upsertPlan(plan);
      process.stdout.write(
        `plan ${plan.name}: ${plan.durationDays} days, ${Object.keys(plan.prices).join(', ')}\n`,
      );
    }
    return 0;
  } finally {
    await dataSource.destroy();
  }
}
