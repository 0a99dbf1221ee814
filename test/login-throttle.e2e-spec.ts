import { startTestApp, type TestApp } from './harness/app';
import { newUser, parseSetCookies } from './harness/factories';

// Its own file: the client address comes from X-Forwarded-For, which needs TRUST_PROXY (one hop: the test client is the proxy).

/** A staff sign-in through the proxy: `forwarded` is the X-Forwarded-For the proxy sends on. */
function loginThroughProxy(
  t: TestApp,
  forwarded: string,
  username: string,
  password: string,
  cookie?: string,
) {
  const req = t
    .http()
    .post('/api/v1/auth/admin/login')
    .set('X-Forwarded-For', forwarded)
    .send({ username, password });
  return cookie ? req.set('Cookie', cookie) : req;
}
describe('staff login throttling', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
  });
  afterAll(() => t.close());

  const login = (from: string, username: string, password: string) =>
    loginThroughProxy(t, from, username, password);

  it('a stranger guessing from one address cannot lock the owner out of another', async () => {
    const owner = await newUser(t, 'owner');
    const username = owner.user.username as string;
    for (let i = 0; i < 5; i++) {
      await login('203.0.113.9', username, `wrong guess ${i}`).expect(401);
    }
    const blocked = await login('203.0.113.9', username, 'wrong guess 6').expect(429);
    expect(blocked.body.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // The attacker's address stays blocked even with the right password.
    await login('203.0.113.9', username, owner.password as string).expect(429);

    const ok = await login('198.51.100.7', username, owner.password as string).expect(200);
    expect(ok.body.user.id).toBe(owner.user.id);
  });

  it('one address cannot sweep many usernames', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      statuses.push((await login('192.0.2.50', `nobody_${i}`, 'some guess here')).status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses[20]).toBe(429);
  });
});

describe('staff login throttling behind one proxy, with device cookies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
  });
  afterAll(() => t.close());

  const login = (forwarded: string, username: string, password: string, cookie?: string) =>
    loginThroughProxy(t, forwarded, username, password, cookie);

  it("an attacker's 100 failures from forged addresses do not stop the owner signing in from a known device", async () => {
    const owner = await newUser(t, 'owner');
    const username = owner.user.username as string;
    const password = owner.password as string;
    // The owner signed in from this laptop before: it keeps a signed device cookie.
    const earlier = await login('198.51.100.20', username, password).expect(200);
    const device = parseSetCookies(earlier.headers['set-cookie']).staff_device;
    expect(device.attributes).toMatchObject({ httponly: true, path: '/api/v1/auth/admin' });
    const deviceCookie = `staff_device=${device.value}`;

    // The attacker writes a new address in front of each request; the proxy appends the real one.
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const forged = `10.${i}.${i}.1, 203.0.113.66`;
      statuses.push((await login(forged, username, `wrong guess ${i}`)).status);
    }
    // Only the proxy's entry counts: the attacker's one real address is blocked after 5 tries.
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);

    const ok = await login('198.51.100.20', username, password, deviceCookie).expect(200);
    expect(ok.body.user.id).toBe(owner.user.id);
  });

  it('guesses from many real addresses hold the username, but not a device that signed in before', async () => {
    const owner = await newUser(t, 'owner');
    const username = owner.user.username as string;
    const password = owner.password as string;
    const earlier = await login('198.51.100.21', username, password).expect(200);
    const deviceCookie = `staff_device=${parseSetCookies(earlier.headers['set-cookie']).staff_device.value}`;

    for (let i = 0; i < 40; i++) {
      const res = await login(`192.0.2.${i + 1}`, username, `wrong guess ${i}`);
      expect([401, 429]).toContain(res.status);
    }
    // A browser that never signed in as the owner is held by the ceiling per username...
    await login('198.51.100.99', username, password).expect(429);
    // ...and so is a device cookie whose signature does not match.
    const [name, id, signature] = deviceCookie.split('.');
    const forged = `${name}.${id}x.${signature}`;
    await login('198.51.100.21', username, password, forged).expect(429);
    // The owner's own device signs in.
    await login('198.51.100.21', username, password, deviceCookie).expect(200);
  });
});

describe('staff login throttling, clients connecting directly', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const login = (username: string, password: string, cookie?: string) => {
    const req = t.http().post('/api/v1/auth/admin/login').send({ username, password });
    return cookie ? req.set('Cookie', cookie) : req;
  };

  it('40 wrong passwords from a neighbour on the same address do not lock out the owner on a known device', async () => {
    const owner = await newUser(t, 'owner');
    const username = owner.user.username as string;
    const password = owner.password as string;
    const earlier = await login(username, password).expect(200);
    const deviceCookie = `staff_device=${parseSetCookies(earlier.headers['set-cookie']).staff_device.value}`;

    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await login(username, `wrong ${i}`)).status);
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    expect(statuses.slice(-20).every((s) => s === 429)).toBe(true);
    // The address is held, for a browser that never signed in here...
    await login(username, password).expect(429);
    // ...but not for the owner's device, which counts on its own.
    const ok = await login(username, password, deviceCookie).expect(200);
    expect(ok.body.user.id).toBe(owner.user.id);
  });
});

describe('global bounds on password checks and sign-ups, whatever addresses a flood claims', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      TRUST_PROXY: '1',
      RATE_STAFF_LOGIN_UNKNOWN_GLOBAL: '5/60',
      RATE_SIGNUP_GLOBAL: '4/600',
    });
  });
  afterAll(() => t.close());

  const from = (i: number) => ({ 'X-Forwarded-For': `10.9.${i >> 8}.${i & 255}` });

  it('sign-ins naming unknown usernames from forged addresses: 429 at once past the global bound; staff still sign in', async () => {
    const owner = await newUser(t, 'owner');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t
        .http()
        .post('/api/v1/auth/admin/login')
        .set(from(i))
        .send({ username: `ghost_${i}`, password: 'some guess here' });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const started = performance.now();
    const refused = await t
      .http()
      .post('/api/v1/auth/admin/login')
      .set(from(99))
      .send({ username: 'ghost_99', password: 'some guess here' })
      .expect(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(1_000);
    await t
      .http()
      .post('/api/v1/auth/admin/login')
      .set(from(100))
      .send({ username: owner.user.username, password: owner.password })
      .expect(200);
  });

  it('sign-ups from forged addresses stop at the global bound and make no rows past it', async () => {
    const count = async () =>
      (await t.dataSource.query(`SELECT count(*)::int AS n FROM users`))[0].n as number;
    const before = await count();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (
          await t
            .http()
            .post('/api/v1/auth/seed')
            .set(from(200 + i))
        ).status,
      );
    }
    expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
    expect(await count()).toBe(before + 4);
    await t.http().post('/api/v1/auth/bot/login-codes').set(from(300)).expect(429);
  });
});

describe('staff login limits are the RATE_STAFF_LOGIN_* settings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      TRUST_PROXY: '1',
      RATE_STAFF_LOGIN_PER_ADDRESS_AND_USERNAME: '2/60',
      RATE_STAFF_LOGIN_PER_ADDRESS: '4/60',
      RATE_STAFF_LOGIN_PER_USERNAME: '3/60',
    });
  });
  afterAll(() => t.close());

  const login = (from: string, username: string, password: string) =>
    loginThroughProxy(t, from, username, password);

  it('per address and username: the third wrong password is refused, with Retry-After within the window', async () => {
    const owner = await newUser(t, 'owner');
    const username = owner.user.username as string;
    await login('203.0.113.30', username, 'wrong guess 1').expect(401);
    await login('203.0.113.30', username, 'wrong guess 2').expect(401);
    const refused = await login('203.0.113.30', username, owner.password as string).expect(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it('per address: the fifth username tried from one address is refused', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await login('203.0.113.31', `nobody_${i}`, 'some guess here')).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
  });

  it('per username: the fourth guess at one username is refused, whatever address it comes from', async () => {
    const owner = await newUser(t, 'owner');
    const username = owner.user.username as string;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await login(`198.51.100.${40 + i}`, username, `wrong ${i}`)).status);
    }
    expect(statuses).toEqual([401, 401, 401]);
    await login('198.51.100.60', username, owner.password as string).expect(429);
  });
});
