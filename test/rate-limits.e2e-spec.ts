import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';

const API = '/api/v1';

/** Rows anyone can make are throttled per address and per account (small limits for the test). */
describe('throttles on routes that make rows', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      TRUST_PROXY: '1',
      RATE_SIGNUP_PER_ADDRESS: '3/600',
      RATE_SEED_LOGIN_PER_ADDRESS: '4/60',
      RATE_SEED_LOGIN_PER_SEED: '3/60',
      RATE_GAME_ROUNDS_PER_ACCOUNT: '3/60',
      RATE_GAME_ROUNDS_PER_ADDRESS: '5/60',
      RATE_TICKET_MESSAGES_PER_ACCOUNT: '4/60',
      RATE_TICKET_MESSAGES_PER_ADDRESS: '100/60',
      RATE_TICKET_MESSAGES_PER_TICKET: '3/3600',
    });
  });
  afterAll(() => t.close());

  const count = async (table: string) =>
    ((await t.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`)) as { n: number }[])[0].n;

  function expectLimited(res: { status: number; body: { code?: string }; headers: object }) {
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('RATE_LIMITED');
    const retryAfter = Number((res.headers as Record<string, string>)['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
  }

  it('account-making public routes share one count per address', async () => {
    const from = (ip: string) => ({ 'X-Forwarded-For': ip });
    const users = await count('users');
    await t.http().post(`${API}/auth/seed`).set(from('203.0.113.1')).expect(201);
    await t.http().post(`${API}/auth/bot/login-codes`).set(from('203.0.113.1')).expect(201);
    await t.http().post(`${API}/auth/seed`).set(from('203.0.113.1')).expect(201);
    expectLimited(await t.http().post(`${API}/auth/seed`).set(from('203.0.113.1')));
    expectLimited(await t.http().post(`${API}/auth/bot/login-codes`).set(from('203.0.113.1')));
    const telegram = await t
      .http()
      .post(`${API}/auth/telegram`)
      .set(from('203.0.113.1'))
      .send({ id: 1, first_name: 'A', auth_date: 1, hash: 'a'.repeat(64) });
    expectLimited(telegram);
    expect(await count('users')).toBe(users + 2);
    // Another address is not affected.
    await t.http().post(`${API}/auth/seed`).set(from('203.0.113.2')).expect(201);
  });

  it('an IPv6 client counts by its /64: other addresses of its prefix share the count, the next prefix does not', async () => {
    const from = (ip: string) => ({ 'X-Forwarded-For': ip });
    for (const ip of ['2001:db8:77:1::1', '2001:db8:77:1::2', '2001:DB8:77:1:ffff:0:0:9']) {
      await t.http().post(`${API}/auth/seed`).set(from(ip)).expect(201);
    }
    expectLimited(await t.http().post(`${API}/auth/seed`).set(from('2001:db8:77:1:abcd::42')));
    await t.http().post(`${API}/auth/seed`).set(from('2001:db8:77:2::1')).expect(201);
  });

  it('seed sign-ins are limited per seed and per address', async () => {
    const u = await newUser(t, 'seed');
    const sessions = await count('refresh_sessions');
    const signIn = (ip: string) =>
      t.http().post(`${API}/auth/seed/login`).set('X-Forwarded-For', ip).send({ seed: u.seed });
    for (let i = 0; i < 3; i++) await signIn(`198.51.100.${i + 1}`).expect(200);
    // A fourth sign-in with this seed, from yet another address.
    expectLimited(await signIn('198.51.100.9'));
    expect(await count('refresh_sessions')).toBe(sessions + 3);
    // One address guessing different seeds.
    for (let i = 0; i < 4; i++) {
      await t
        .http()
        .post(`${API}/auth/seed/login`)
        .set('X-Forwarded-For', '192.0.2.80')
        .send({ seed: `guess ${i}` })
        .expect(401);
    }
    expectLimited(
      await t
        .http()
        .post(`${API}/auth/seed/login`)
        .set('X-Forwarded-For', '192.0.2.80')
        .send({ seed: 'guess 5' }),
    );
  });

  it('game rounds are limited per account and per address', async () => {
    const a = await newUser(t, 'seed');
    const rounds = await count('game_rounds');
    const start = (who: typeof a, ip: string) =>
      t.http().post(`${API}/game/rounds`).set(who.bearer).set('X-Forwarded-For', ip);
    for (let i = 0; i < 3; i++) await start(a, `198.51.100.${40 + i}`).expect(201);
    expectLimited(await start(a, '198.51.100.50'));
    expect(await count('game_rounds')).toBe(rounds + 3);
    // Other accounts from one address: the address's own limit (5) holds them.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const other = await newUser(t, 'seed');
      statuses.push((await start(other, '192.0.2.90')).status);
      statuses.push((await start(other, '192.0.2.90')).status);
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
  });

  it('ticket messages are limited per account and per ticket per hour', async () => {
    const u = await newUser(t, 'seed');
    const opened = await t
      .http()
      .post(`${API}/tickets`)
      .set(u.bearer)
      .send({ subject: 'help', message: 'first' })
      .expect(201);
    const id = opened.body.ticket.id as string;
    const post = (who: typeof u, ticket = id) =>
      t.http().post(`${API}/tickets/${ticket}/messages`).set(who.bearer).send({ body: 'x' });
    for (let i = 0; i < 3; i++) await post(u).expect(201);
    // The ticket's cap (3 an hour) is reached; the account's (4 a minute) too.
    expectLimited(await post(u));
    const messages = (await t.dataSource.query(
      'SELECT count(*)::int AS n FROM ticket_messages WHERE ticket_id = $1',
      [id],
    )) as { n: number }[];
    expect(messages[0].n).toBe(4);
    // An unknown ticket is still counted against the account, never a 500.
    expect((await post(u, randomUUID())).status).toBe(429);
  });
});
