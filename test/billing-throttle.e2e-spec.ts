import { startBillingWorld, type BillingWorld } from './fakes/billing';
import { newUser, savePlan, type TestUser } from './harness/factories';

/** Free seed accounts cannot make the service call the Bot API or the rates API without end. */
describe('billing: invoice orders are throttled per account and per address', () => {
  let world: BillingWorld;

  const order = (user: TestUser, provider: 'ton' | 'telegram' = 'telegram') =>
    world.t
      .http()
      .post('/api/v1/invoices')
      .set(user.bearer)
      .send({ plan_name: 'monthly', currency: 'USD', provider });

  beforeAll(async () => {
    world = await startBillingWorld(
      { USD: '2.5' },
      { RATE_INVOICES_PER_ACCOUNT: '3/600', RATE_INVOICES_PER_ADDRESS: '5/600' },
    );
    await savePlan(world.t, await newUser(world.t, 'owner'), { traffic_limit_bytes: 1 });
  });
  afterAll(() => world.close());

  it('the 4th order of one account and the 6th from one address are 429 with Retry-After, calling nothing', async () => {
    const first = await newUser(world.t, 'seed');
    for (let i = 0; i < 3; i += 1) await order(first).expect(201);
    const links = world.botApi.callsOf('createInvoiceLink').length;
    const rates = world.tonapi.requests.length;

    const refused = await order(first).expect(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(600);
    await order(first, 'ton').expect(429);

    // Another account from the same address: two more, then the address is spent too.
    const second = await newUser(world.t, 'seed');
    await order(second).expect(201);
    await order(second).expect(201);
    expect((await order(second).expect(429)).body.code).toBe('RATE_LIMITED');
    expect(await world.t.dataSource.query(`SELECT count(*)::int AS n FROM invoices`)).toEqual([
      { n: 5 },
    ]);
    expect(world.botApi.callsOf('createInvoiceLink').length).toBe(links + 2);
    expect(world.tonapi.requests.length).toBe(rates);
  });
});

/**
 * The per-address count is by the client address as every throttle counts it: an IPv6 client by
 * its /64 (one subscriber may use any address in it), an IPv4-mapped IPv6 address as the IPv4.
 * Its own app: the client address comes from X-Forwarded-For (one hop: the test client is the proxy).
 */
describe('billing: the per-address invoice throttle counts the address as every throttle does', () => {
  let world: BillingWorld;

  const orderFrom = async (address: string) =>
    world.t
      .http()
      .post('/api/v1/invoices')
      .set((await newUser(world.t, 'seed')).bearer)
      .set('X-Forwarded-For', address)
      .send({ plan_name: 'monthly', currency: 'USD', provider: 'telegram' });

  beforeAll(async () => {
    world = await startBillingWorld(
      { USD: '2.5' },
      { TRUST_PROXY: '1', RATE_INVOICES_PER_ADDRESS: '2/600' },
    );
    await savePlan(world.t, await newUser(world.t, 'owner'), { traffic_limit_bytes: 1 });
  });
  afterAll(() => world.close());

  it('two addresses of one IPv6 /64 share one count; another /64 has its own', async () => {
    expect((await orderFrom('2001:db8:7:1::a')).status).toBe(201);
    expect((await orderFrom('2001:db8:7:1:ffff:ffff:ffff:1')).status).toBe(201);
    const refused = await orderFrom('2001:db8:7:1::b');
    expect([refused.status, refused.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect((await orderFrom('2001:db8:7:2::a')).status).toBe(201);
  });

  it('an IPv4-mapped IPv6 address counts as the IPv4 address', async () => {
    expect((await orderFrom('198.51.100.7')).status).toBe(201);
    expect((await orderFrom('::ffff:198.51.100.7')).status).toBe(201);
    expect((await orderFrom('198.51.100.7')).status).toBe(429);
    expect((await orderFrom('::FFFF:198.51.100.7')).status).toBe(429);
  });
});
