import { randomUUID } from 'node:crypto';
import { Invoice } from '../src/billing/entities/invoice.entity';
import { BusinessMetricsRepository } from '../src/metrics/business-metrics.repository';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { invoiceRow, noonAgo } from './harness/stats-seed';

/**
 * The money received has two readers: the staff's figures (GET /admin/stats, per day) and the
 * metrics (vpn_money_received_total, per provider). On the same payments both give the same sum in
 * each currency: TON in nanotons for `ton` invoices whatever fiat priced them, the invoice's own
 * currency otherwise, unpaid invoices nowhere.
 */
describe('money received, as the staff figures and the metrics report it', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    await savePlan(t, owner, { prices: { USD: '499', EUR: '450', IQD: '6500000' } });
    const buyer = await newUser(t, 'seed');
    const invoice = (fields: Partial<Invoice>) => invoiceRow(buyer.user.id, fields);
    await t.dataSource.getRepository(Invoice).save([
      invoice({ paidAt: noonAgo(3) }),
      invoice({ paidAt: noonAgo(1), amount: '501' }),
      invoice({ provider: 'ton', amount: '2500000000', comment: randomUUID(), paidAt: noonAgo(3) }),
      invoice({
        provider: 'ton',
        currency: 'EUR',
        amount: '1000000001',
        comment: randomUUID(),
        paidAt: new Date(),
      }),
      invoice({ currency: 'EUR', amount: '450', paidAt: noonAgo(2) }),
      invoice({ currency: 'IQD', amount: '6500000', paidAt: noonAgo(2) }),
      invoice({ currency: 'XTR', amount: '250', paidAt: noonAgo(1) }),
      invoice({ status: 'pending', paidAt: null }),
      invoice({ status: 'expired', paidAt: null, currency: 'EUR' }),
    ]);
  });
  afterAll(() => t.close());

  const add = (sums: Record<string, bigint>, currency: string, amount: bigint | string) => {
    sums[currency] = (sums[currency] ?? 0n) + BigInt(amount);
  };

  it('both give the same sum in each currency', async () => {
    const stats = await t.http().get('/api/v1/admin/stats?days=30').set(owner.bearer).expect(200);
    const byStats: Record<string, bigint> = {};
    for (const day of stats.body.days as { received: Record<string, string> }[]) {
      for (const [currency, amount] of Object.entries(day.received)) add(byStats, currency, amount);
    }
    const byMetrics: Record<string, bigint> = {};
    for (const total of await t.app.get(BusinessMetricsRepository).paymentTotals()) {
      add(byMetrics, total.currency, total.amountMinor);
    }
    const expected = {
      USD: 1000n,
      TON: 3500000001n,
      EUR: 450n,
      IQD: 6500000n,
      XTR: 250n,
    };
    expect(byStats).toEqual(expected);
    expect(byMetrics).toEqual(expected);
  });
});
