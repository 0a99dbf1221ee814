import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';

// Its own file: the client address comes from X-Forwarded-For, which needs TRUST_PROXY=true.
describe('staff login throttling', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
  });
  afterAll(() => t.close());

  const login = (from: string, username: string, password: string) =>
    t
      .http()
      .post('/api/v1/auth/admin/login')
      .set('X-Forwarded-For', from)
      .send({ username, password });

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
