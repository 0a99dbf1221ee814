import { SchedulerRegistry } from '@nestjs/schedule';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { JOBS } from '../src/scheduler/intervals';
import { startBillingWorld, WALLET, type BillingWorld } from './fakes/billing';
import { tonTransaction, type FakeToncenter } from './fakes/toncenter';

/**
 * The app as `main.ts` builds it, with scheduled jobs on (the other billing tests call
 * `reconcile()` by hand). Its own file: two apps in one process would share passport's strategies.
 */
describe('billing: scheduled reconciliation', () => {
  let world: BillingWorld;
  let app: NestExpressApplication;
  let toncenter: FakeToncenter;

  beforeAll(async () => {
    world = await startBillingWorld({}, { RECONCILE_INTERVAL_S: '1' }, { schedule: true });
    ({ app } = world.t);
    ({ toncenter } = world);
  });
  afterAll(() => world.close());

  it('runs every RECONCILE_INTERVAL_S and credits a paid invoice', async () => {
    // Scheduled: its regular ticks, or the timer that starts them at the job's phase.
    const registry = app.get(SchedulerRegistry);
    expect(
      registry.doesExist('interval', JOBS.reconcile.name) ||
        registry.doesExist('timeout', `${JOBS.reconcile.name}:phase`),
    ).toBe(true);
    // On chain first: a run may reuse a look at toncenter for a few seconds, so it must see it.
    const comment = 'inv-scheduled01';
    toncenter.transactions.push(
      tonTransaction({ to: WALLET.toRawString(), value: '1000', comment }),
    );
    const db = app.get(DataSource);
    const [user] = await db.query(`INSERT INTO users DEFAULT VALUES RETURNING id`);
    await db.query(
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes) VALUES ('monthly', 30, 1)`,
    );
    const [invoice] = await db.query(
      `INSERT INTO invoices (id, user_id, plan_name, currency, amount, provider, payment, comment,
         expires_at)
       VALUES (gen_random_uuid(), $1, 'monthly', 'USD', '1000', 'ton', '{}', $2,
         now() + interval '1 day') RETURNING id`,
      [user.id, comment],
    );

    let status = 'pending';
    for (let i = 0; i < 40 && status !== 'paid'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      [{ status }] = await db.query(`SELECT status FROM invoices WHERE id = $1`, [invoice.id]);
    }
    expect(status).toBe('paid');
    const [row] = await db.query(`SELECT plan_name FROM users WHERE id = $1`, [user.id]);
    expect(row.plan_name).toBe('monthly');
  });
});
