/**
 * The demo mode's "simulate the payment" (issue 42, point 2): with DEMO_PAYMENTS=true the fake chain
 * shows the transfer for the caller's pending TON invoice and "I paid" confirms it as any other;
 * without it the route does not exist (404), and production refuses the setting.
 */
import { loadSettings, SettingsError } from '../src/config/settings';
import { startBillingWorld, type BillingWorld } from './fakes/billing';
import { newUser, savePlan, type TestUser } from './harness/factories';

describe('demo payments', () => {
  jest.setTimeout(60_000);
  let demo: BillingWorld;
  let plain: BillingWorld;
  const simulate = (world: BillingWorld, buyer: TestUser, id: string) =>
    world.t.http().post(`/api/v1/demo/invoices/${id}/simulate-payment`).set(buyer.bearer);

  async function ordered(world: BillingWorld): Promise<{ buyer: TestUser; id: string }> {
    const owner = await newUser(world.t, 'owner');
    await savePlan(world.t, owner, { prices: { USD: '499' } }, 'monthly');
    const buyer = await newUser(world.t);
    const res = await world.t
      .http()
      .post('/api/v1/invoices')
      .set(buyer.bearer)
      .send({ plan_name: 'monthly', currency: 'USD', provider: 'ton' })
      .expect(201);
    return { buyer, id: (res.body as { id: string }).id };
  }

  beforeAll(async () => {
    demo = await startBillingWorld({ USD: '5' }, { DEMO_PAYMENTS: 'true' });
  });
  afterAll(async () => {
    await demo?.close();
  });

  it('in demo mode the button pays the invoice through the normal confirmation', async () => {
    const config = await demo.t.http().get('/api/v1/config').expect(200);
    expect(config.body.demo_payments).toBe(true);
    const { buyer, id } = await ordered(demo);
    const other = await newUser(demo.t);
    expect((await simulate(demo, other, id).expect(404)).body.code).toBe('NOT_FOUND');
    await demo.t.http().post(`/api/v1/invoices/${id}/confirm`).set(buyer.bearer).expect(409);

    await simulate(demo, buyer, id).expect(204);
    const confirmed = await demo.t
      .http()
      .post(`/api/v1/invoices/${id}/confirm`)
      .set(buyer.bearer)
      .expect(200);
    expect(confirmed.body.invoice.status).toBe('paid');
    expect(confirmed.body.subscription.plan_name).toBe('monthly');
    expect((await simulate(demo, buyer, id).expect(409)).body.code).toBe('INVOICE_NOT_PENDING');
  });

  it('without DEMO_PAYMENTS the route is 404 and the chain is never touched', async () => {
    // One application on the file's database at a time.
    await demo.close();
    plain = await startBillingWorld({ USD: '5' });
    demo = plain;
    const config = await plain.t.http().get('/api/v1/config').expect(200);
    expect(config.body.demo_payments).toBe(false);
    const { buyer, id } = await ordered(plain);
    const before = plain.toncenter.requests.length;
    expect((await simulate(plain, buyer, id).expect(404)).body.code).toBe('NOT_FOUND');
    expect(plain.toncenter.requests.length).toBe(before);
  });

  it('production refuses DEMO_PAYMENTS at start-up, saying why', () => {
    const refusal = (() => {
      try {
        loadSettings({ NODE_ENV: 'production', DEMO_PAYMENTS: 'true' });
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(SettingsError);
    expect((refusal as SettingsError).message).toContain(
      'DEMO_PAYMENTS: fake TON rates and a fake chain',
    );
  });
});
