import { createHash, createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { accessTokenKey } from '../src/auth/sessions.service';
import { AccountsRepository } from '../src/users/accounts.repository';
import { UsersService } from '../src/users/users.service';
import { AuthService } from '../src/auth/auth.service';
import { startTestApp, TRUSTED_ORIGIN, type TestApp } from './harness/app';
import { slowedDown } from './harness/slowed';
import { newUser, parseSetCookies } from './harness/factories';

const BOT_TOKEN = '123456:TEST-bot-token-for-widget-checks';

function signWidget(
  fields: Record<string, string | number>,
  botToken = BOT_TOKEN,
): Record<string, string | number> {
  const checkString = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  const key = createHash('sha256').update(botToken).digest();
  return { ...fields, hash: createHmac('sha256', key).update(checkString).digest('hex') };
}

describe('accounts and sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Secure as production sets it by default; outside production the default is not Secure.
    t = await startTestApp({ BOT_TOKEN, COOKIE_DOMAIN: 'example.test', COOKIE_SECURE: 'true' });
  });
  afterAll(() => t.close());

  const cookieHeaderFrom = (setCookie: string[] | string | undefined): string => {
    const cookies = parseSetCookies(setCookie);
    return Object.entries(cookies)
      .filter(([, c]) => c.value !== '')
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  };

  it('seed account: created once, shown once, login works, cookies have the contract attributes', async () => {
    const created = await t.http().post('/api/v1/auth/seed').expect(201);
    expect(created.body.seed).toMatch(/^([0-9a-z]{4}-){7}[0-9a-z]{4}$/);
    expect(typeof created.body.access_token).toBe('string');
    expect(created.body.user).toMatchObject({
      role: null,
      username: null,
      tg_id: null,
      subscription: null,
    });

    const cookies = parseSetCookies(created.headers['set-cookie']);
    expect(cookies.access_token.value).toBe(created.body.access_token);
    expect(cookies.access_token.attributes).toMatchObject({
      httponly: true,
      secure: true,
      samesite: 'Lax',
      path: '/',
      'max-age': '900',
      domain: 'example.test',
    });
    expect(cookies.access_token.attributes.expires).toBeDefined();
    expect(cookies.refresh_token.attributes).toMatchObject({
      httponly: true,
      secure: true,
      samesite: 'Lax',
      path: '/api/v1/auth',
      'max-age': '2592000',
      domain: 'example.test',
    });

    const login = await t
      .http()
      .post('/api/v1/auth/seed/login')
      .send({ seed: created.body.seed.toUpperCase() })
      .expect(200);
    expect(login.body.user.id).toBe(created.body.user.id);
    await t
      .http()
      .get('/api/v1/users/me')
      .set('Authorization', `Bearer ${login.body.access_token}`)
      .expect(200)
      .expect((res) => expect(res.body.id).toBe(created.body.user.id));

    const wrong = await t
      .http()
      .post('/api/v1/auth/seed/login')
      .send({ seed: 'not-the-seed' })
      .expect(401);
    expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
  });

  it('GET /users/me needs a valid session', async () => {
    const res = await t.http().get('/api/v1/users/me').expect(401);
    expect(res.body).toMatchObject({ statusCode: 401, code: 'UNAUTHENTICATED' });
    await t.http().get('/api/v1/users/me').set('Authorization', 'Bearer not.a.jwt').expect(401);
    // Correctly signed, but its payload is not an object: jsonwebtoken throws on `null`.
    for (const payload of ['null', '[]', '"x"', '42']) {
      const signed = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
      const mac = createHmac('sha256', accessTokenKey(t.settings))
        .update(signed)
        .digest('base64url');
      const odd = await t
        .http()
        .get('/api/v1/users/me')
        .set('Authorization', `Bearer ${signed}.${mac}`);
      expect([payload, odd.status, odd.body.code]).toEqual([payload, 401, 'UNAUTHENTICATED']);
    }
    const me = await newUser(t, 'seed');
    const res2 = await t.http().get('/api/v1/users/me').set('Cookie', me.cookie).expect(200);
    expect(res2.body).toEqual({
      id: me.user.id,
      role: null,
      username: null,
      tg_id: null,
      can_manage_nodes: false,
      partner_code: null,
      commission_percent: null,
      subscription: null,
      traffic: { limit_bytes: 107374182400, used_bytes: 0, resets_at: null },
      blocked_at: null,
      created_at: expect.any(String),
    });
  });

  it('an access token signed with the real key is refused without an expiry, an issue time, or with too long a life', async () => {
    const me = await newUser(t, 'seed');
    const { sub, sid, role } = jwt.decode(me.bearer.Authorization.slice('Bearer '.length)) as {
      sub: string;
      sid: string;
      role: null;
    };
    const key = accessTokenKey(t.settings) as unknown as Buffer;
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: object, options: jwt.SignOptions = {}) =>
      jwt.sign({ sub, sid, role, ...claims }, key, { algorithm: 'HS256', ...options });
    const call = (token: string) =>
      t.http().get('/api/v1/users/me').set('Authorization', `Bearer ${token}`);

    // The same claims with the service's lifetime are accepted: the refusals below are the claims'.
    await call(sign({}, { expiresIn: t.settings.accessTokenTtlS })).expect(200);
    const forever = sign({});
    const noIssueTime = sign({ exp: now + 600 }, { noTimestamp: true });
    const decade = sign({}, { expiresIn: 10 * 365 * 86_400 });
    for (const token of [forever, noIssueTime, decade]) {
      const refused = await call(token).expect(401);
      expect(refused.body.code).toBe('UNAUTHENTICATED');
    }
  });

  it('requests at once share session reads, and each still gets its own answer', async () => {
    const users = await Promise.all(Array.from({ length: 8 }, () => newUser(t, 'seed')));
    const signedOut = await newUser(t, 'seed');
    await t.http().post('/api/v1/auth/logout').set(signedOut.bearer).expect(204);
    // Correctly signed, but naming one user's session and another user.
    const crossed = jwt.sign(
      { sub: users[1].user.id, sid: users[0].session.sessionId, role: null },
      accessTokenKey(t.settings),
      { algorithm: 'HS256', expiresIn: 600 },
    );
    const callers = [
      ...users.flatMap((u) => Array.from({ length: 4 }, () => ({ u, bearer: u.bearer }))),
      ...Array.from({ length: 4 }, () => ({ u: null, bearer: signedOut.bearer })),
      ...Array.from({ length: 4 }, () => ({
        u: null,
        bearer: { Authorization: `Bearer ${crossed}` },
      })),
    ];
    const reads = slowedDown(t.app.get(AccountsRepository), 'findBySessions');
    try {
      const answers = await Promise.all(
        callers.map(({ bearer }) => t.http().get('/api/v1/users/me').set(bearer)),
      );
      expect(answers.map((answer) => [answer.status, answer.body.id ?? answer.body.code])).toEqual(
        callers.map(({ u }) => (u ? [200, u.user.id] : [401, 'UNAUTHENTICATED'])),
      );
      const keysRead = reads.mock.calls.reduce((sum, [keys]) => sum + keys.length, 0);
      expect(keysRead).toBe(callers.length);
      expect(reads.mock.calls.length).toBeLessThan(callers.length);
    } finally {
      reads.mockRestore();
    }
  });

  it('a session read that fails is a 500 for the requests it served, never a signed-out 401', async () => {
    const u = await newUser(t, 'seed');
    const repository = t.app.get(AccountsRepository);
    const reads = jest
      .spyOn(repository, 'findBySessions')
      .mockRejectedValueOnce(new Error('a failing statement'));
    try {
      const failed = await t.http().get('/api/v1/users/me').set(u.bearer);
      expect([failed.status, failed.body.code]).toEqual([500, 'INTERNAL']);
    } finally {
      reads.mockRestore();
    }
    await t.http().get('/api/v1/users/me').set(u.bearer).expect(200);
  });

  it('a column added to users by a newer instance does not break sign-in checks already prepared', async () => {
    const u = await newUser(t, 'seed');
    for (let i = 0; i < 3; i++) await t.http().get('/api/v1/users/me').set(u.bearer).expect(200);
    await t.dataSource.query('ALTER TABLE users ADD COLUMN added_by_a_newer_version integer');
    try {
      for (let i = 0; i < 3; i++) await t.http().get('/api/v1/users/me').set(u.bearer).expect(200);
    } finally {
      await t.dataSource.query('ALTER TABLE users DROP COLUMN added_by_a_newer_version');
    }
  });

  it('refresh rotates; presenting the old token revokes every session of the user', async () => {
    const phone = await newUser(t, 'seed');
    const laptop = await t
      .http()
      .post('/api/v1/auth/seed/login')
      .send({ seed: phone.seed })
      .expect(200);
    const laptopCookie = cookieHeaderFrom(laptop.headers['set-cookie']);

    const rotated = await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: phone.cookie, Origin: TRUSTED_ORIGIN })
      .expect(200);
    expect(rotated.body.user.id).toBe(phone.user.id);
    const fresh = parseSetCookies(rotated.headers['set-cookie']);
    expect(fresh.refresh_token.value).not.toBe(phone.session.refreshToken);
    expect(fresh.access_token.value).not.toBe(phone.session.accessToken);
    const freshCookie = cookieHeaderFrom(rotated.headers['set-cookie']);
    await t.http().get('/api/v1/users/me').set('Cookie', freshCookie).expect(200);

    // The stolen-token case: the old refresh token comes back.
    const reused = await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: phone.cookie, Origin: TRUSTED_ORIGIN })
      .expect(401);
    expect(reused.body.code).toBe('REFRESH_REUSED');

    // Every session of that user is gone at once, including the other device's.
    await t.http().get('/api/v1/users/me').set('Cookie', freshCookie).expect(401);
    await t.http().get('/api/v1/users/me').set('Cookie', laptopCookie).expect(401);
    const laptopRefresh = await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: laptopCookie, Origin: TRUSTED_ORIGIN })
      .expect(401);
    expect(laptopRefresh.body.code).toBe('REFRESH_INVALID');
  });

  it('20 concurrent refreshes with one token: at most one succeeds', async () => {
    const u = await newUser(t, 'seed');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.http().post('/api/v1/auth/refresh').set({ Cookie: u.cookie, Origin: TRUSTED_ORIGIN }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeLessThanOrEqual(1);
    // What the user notices: the reuse was detected, so every session of theirs is gone.
    expect(results.some((r) => r.body.code === 'REFRESH_REUSED')).toBe(true);
    await t.http().get('/api/v1/users/me').set(u.bearer).expect(401);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(401);
      expect(['REFRESH_REUSED', 'REFRESH_INVALID']).toContain(r.body.code);
    }
    const { rows } = await t.dataSource
      .query(
        `SELECT count(*)::int AS n FROM refresh_sessions WHERE user_id = $1 AND rotated_at IS NOT NULL`,
        [u.user.id],
      )
      .then((r: { n: number }[]) => ({ rows: r }));
    expect(rows[0].n).toBe(1);
  });

  it('refresh without a cookie, or with an unknown one, is REFRESH_INVALID', async () => {
    const none = await t.http().post('/api/v1/auth/refresh').expect(401);
    expect(none.body.code).toBe('REFRESH_INVALID');
    // Nothing to clear: a sign-in finishing meanwhile in the same browser keeps its cookies.
    expect(none.headers['set-cookie']).toBeUndefined();
    const unknown = await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: 'refresh_token=nope', Origin: TRUSTED_ORIGIN })
      .expect(401);
    expect(unknown.body.code).toBe('REFRESH_INVALID');
    // A refresh cookie that no longer works is cleared with the access cookie.
    const cleared = parseSetCookies(unknown.headers['set-cookie']);
    expect([cleared.access_token.value, cleared.refresh_token.value]).toEqual(['', '']);
  });

  it('logout revokes the session at once and clears the cookies', async () => {
    const u = await newUser(t, 'seed');
    const res = await t.http().post('/api/v1/auth/logout').set(u.cookieHeaders).expect(204);
    const cleared = parseSetCookies(res.headers['set-cookie']);
    expect(cleared.access_token.value).toBe('');
    expect(cleared.refresh_token.attributes.path).toBe('/api/v1/auth');
    await t.http().get('/api/v1/users/me').set(u.bearer).expect(401);
  });

  it('logout ends the whole sign-in: access tokens from before a refresh stop working too', async () => {
    const u = await newUser(t, 'seed');
    const other = await t.http().post('/api/v1/auth/seed/login').send({ seed: u.seed }).expect(200);
    const refreshed = await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: u.cookie, Origin: TRUSTED_ORIGIN })
      .expect(200);
    const latest = cookieHeaderFrom(refreshed.headers['set-cookie']);
    // The access token issued before the refresh still works until the sign-in ends.
    await t.http().get('/api/v1/users/me').set(u.bearer).expect(200);

    await t
      .http()
      .post('/api/v1/auth/logout')
      .set({ Cookie: latest, Origin: TRUSTED_ORIGIN })
      .expect(204);
    await t.http().get('/api/v1/users/me').set(u.bearer).expect(401);
    await t.http().get('/api/v1/users/me').set('Cookie', latest).expect(401);
    const again = await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: latest, Origin: TRUSTED_ORIGIN })
      .expect(401);
    expect(again.body.code).toBe('REFRESH_INVALID');
    // Another sign-in of the same account is not this one: it keeps working.
    const otherCookie = cookieHeaderFrom(other.headers['set-cookie']);
    await t.http().get('/api/v1/users/me').set('Cookie', otherCookie).expect(200);
  });

  it('staff login: argon2id, same answer for unknown user and wrong password, throttled', async () => {
    const mod = await newUser(t, 'moderator');
    const ok = await t
      .http()
      .post('/api/v1/auth/admin/login')
      .send({ username: mod.user.username, password: mod.password })
      .expect(200);
    expect(ok.body.user).toMatchObject({ id: mod.user.id, role: 'moderator' });
    expect(parseSetCookies(ok.headers['set-cookie']).access_token).toBeDefined();

    const [{ password_hash }] = await t.dataSource.query(
      'SELECT password_hash FROM users WHERE id = $1',
      [mod.user.id],
    );
    expect(password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);

    const wrongPassword = await t
      .http()
      .post('/api/v1/auth/admin/login')
      .send({ username: mod.user.username, password: 'wrong password!' })
      .expect(401);
    const unknownUser = await t
      .http()
      .post('/api/v1/auth/admin/login')
      .send({ username: 'nobody_here', password: 'wrong password!' })
      .expect(401);
    // The same answer but for the request's own id.
    const { request_id: wrongId, ...wrongAnswer } = wrongPassword.body;
    const { request_id: unknownId, ...unknownAnswer } = unknownUser.body;
    expect(wrongAnswer).toEqual(unknownAnswer);
    expect([wrongId, unknownId]).toEqual([
      wrongPassword.headers['x-request-id'],
      unknownUser.headers['x-request-id'],
    ]);
    expect(wrongPassword.body.code).toBe('INVALID_CREDENTIALS');

    // A seed account has no password and cannot use the staff login.
    let limited;
    for (let i = 0; i < 6; i++) {
      limited = await t
        .http()
        .post('/api/v1/auth/admin/login')
        .send({ username: 'target_user', password: 'guess number ' + i });
    }
    expect(limited?.status).toBe(429);
    expect(limited?.body.code).toBe('RATE_LIMITED');
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('the database holds no seed, password, refresh token or bootstrap token in the clear', async () => {
    const created = await t.http().post('/api/v1/auth/seed').expect(201);
    const refresh = parseSetCookies(created.headers['set-cookie']).refresh_token.value;
    const mod = await newUser(t, 'moderator');
    const bootstrap = await t.app.get(AuthService).issueBootstrapToken(created.body.user.id);

    const dump = JSON.stringify(
      await Promise.all(
        ['users', 'refresh_sessions', 'bootstrap_tokens', 'login_codes'].map((table) =>
          t.dataSource.query(`SELECT * FROM ${table}`),
        ),
      ),
      (_k, v) => (v && v.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v),
    );
    const seedCompact = created.body.seed.replace(/-/g, '');
    for (const secret of [created.body.seed, seedCompact, refresh, mod.password!, bootstrap]) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(Buffer.from(secret).toString('hex'));
    }
    const [row] = await t.dataSource.query('SELECT seed_hash FROM users WHERE id = $1', [
      created.body.user.id,
    ]);
    expect(row.seed_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  describe('origin check', () => {
    it('rejects a cookie-authenticated POST from a foreign origin, or with no origin, and changes nothing', async () => {
      const u = await newUser(t, 'seed');
      const foreign = await t
        .http()
        .post('/api/v1/auth/logout')
        .set({ Cookie: u.cookie, Origin: 'https://evil.example' })
        .expect(403);
      expect(foreign.body.code).toBe('ORIGIN_REJECTED');
      const bare = await t.http().post('/api/v1/auth/logout').set({ Cookie: u.cookie }).expect(403);
      expect(bare.body.code).toBe('ORIGIN_REJECTED');
      const badReferer = await t
        .http()
        .post('/api/v1/auth/logout')
        .set({ Cookie: u.cookie, Referer: 'https://evil.example/page' })
        .expect(403);
      expect(badReferer.body.code).toBe('ORIGIN_REJECTED');
      // Nothing changed: the session still works.
      await t.http().get('/api/v1/users/me').set('Cookie', u.cookie).expect(200);
      const refresh = await t
        .http()
        .post('/api/v1/auth/refresh')
        .set({ Cookie: u.cookie })
        .expect(403);
      expect(refresh.body.code).toBe('ORIGIN_REJECTED');
      await t.http().get('/api/v1/users/me').set('Cookie', u.cookie).expect(200);
    });

    it('an Authorization header without a valid token neither skips the check nor falls back to the cookie', async () => {
      const u = await newUser(t, 'seed');
      for (const authorization of ['Bearer junk', 'Basic abc', 'Bearer ']) {
        const foreign = await t
          .http()
          .post('/api/v1/auth/logout')
          .set({ Cookie: u.cookie, Authorization: authorization, Origin: 'https://evil.example' })
          .expect(403);
        expect(foreign.body.code).toBe('ORIGIN_REJECTED');
        const trusted = await t
          .http()
          .post('/api/v1/auth/logout')
          .set({ Cookie: u.cookie, Authorization: authorization, Origin: TRUSTED_ORIGIN })
          .expect(401);
        expect(trusted.body.code).toBe('UNAUTHENTICATED');
        await t
          .http()
          .get('/api/v1/users/me')
          .set({ Cookie: u.cookie, Authorization: authorization })
          .expect(401);
      }
      // Nothing was signed out.
      await t.http().get('/api/v1/users/me').set('Cookie', u.cookie).expect(200);
    });

    it('passes a trusted Origin, a trusted Referer, or a Bearer token with no Origin', async () => {
      const a = await newUser(t, 'seed');
      await t
        .http()
        .post('/api/v1/auth/logout')
        .set({ Cookie: a.cookie, Origin: TRUSTED_ORIGIN })
        .expect(204);
      const b = await newUser(t, 'seed');
      await t
        .http()
        .post('/api/v1/auth/logout')
        .set({ Cookie: b.cookie, Referer: `${TRUSTED_ORIGIN}/account` })
        .expect(204);
      const c = await newUser(t, 'seed');
      await t.http().post('/api/v1/auth/logout').set(c.bearer).expect(204);
    });

    it('checks unauthenticated login calls only when they name an origin', async () => {
      await t.http().post('/api/v1/auth/seed').expect(201);
      await t.http().post('/api/v1/auth/seed').set('Origin', TRUSTED_ORIGIN).expect(201);
      const res = await t
        .http()
        .post('/api/v1/auth/seed')
        .set('Origin', 'https://evil.example')
        .expect(403);
      expect(res.body.code).toBe('ORIGIN_REJECTED');
    });

    it("trusts the service's own origin, so the OpenAPI UI it serves can sign in and write", async () => {
      const owner = await newUser(t, 'owner');
      await t.http().get('/api/v1/docs/').expect(200);
      // What the UI's page at <service>/api/v1/docs sends: its own origin, not in CSRF_TRUSTED_ORIGINS.
      const own = t.baseUrl;
      const login = await t
        .http()
        .post('/api/v1/auth/admin/login')
        .set('Origin', own)
        .send({ username: owner.user.username, password: owner.password })
        .expect(200);
      const cookies = parseSetCookies(login.headers['set-cookie']);
      const cookie = `access_token=${cookies.access_token.value}; refresh_token=${cookies.refresh_token.value}`;
      await t.http().post('/api/v1/auth/refresh').set({ Cookie: cookie, Origin: own }).expect(200);
      // The public base URL (PUBLIC_API_URL) is the service's own origin too, as behind a proxy.
      await t
        .http()
        .post('/api/v1/auth/admin/login')
        .set('Origin', 'http://localhost:3000')
        .send({ username: owner.user.username, password: owner.password })
        .expect(200);

      const foreign = await t
        .http()
        .post('/api/v1/auth/admin/login')
        .set('Origin', 'http://127.0.0.1:1')
        .send({ username: owner.user.username, password: owner.password })
        .expect(403);
      expect(foreign.body).toMatchObject({
        code: 'ORIGIN_REJECTED',
        message: expect.stringContaining('CSRF_TRUSTED_ORIGINS'),
      });
    });

    it('answers credentialed CORS only to listed origins', async () => {
      const ok = await t
        .http()
        .options('/api/v1/users/me')
        .set({ Origin: TRUSTED_ORIGIN, 'Access-Control-Request-Method': 'GET' });
      expect(ok.headers['access-control-allow-origin']).toBe(TRUSTED_ORIGIN);
      expect(ok.headers['access-control-allow-credentials']).toBe('true');
      const no = await t
        .http()
        .options('/api/v1/users/me')
        .set({ Origin: 'https://evil.example', 'Access-Control-Request-Method': 'GET' });
      expect(no.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('Telegram login widget', () => {
    const fields = () => ({
      id: 424242,
      first_name: 'Ada',
      username: 'ada_l',
      auth_date: Math.floor(Date.now() / 1000) - 10,
    });

    it('a correctly signed payload signs in and creates the account once', async () => {
      const first = await t
        .http()
        .post('/api/v1/auth/telegram')
        .send(signWidget(fields()))
        .expect(200);
      expect(first.body.user).toMatchObject({ tg_id: 424242, role: null });
      const again = await t
        .http()
        .post('/api/v1/auth/telegram')
        .send(signWidget(fields()))
        .expect(200);
      expect(again.body.user.id).toBe(first.body.user.id);
    });

    it('a changed field, a stale auth_date, or another bot token fails', async () => {
      const tampered = { ...signWidget(fields()), first_name: 'Eve' };
      const stale = signWidget({
        ...fields(),
        auth_date: Math.floor(Date.now() / 1000) - 86_400 - 60,
      });
      const otherBot = signWidget(fields(), '999:another-bot-token');
      for (const body of [tampered, stale, otherBot]) {
        const res = await t.http().post('/api/v1/auth/telegram').send(body).expect(401);
        expect(res.body.code).toBe('TELEGRAM_AUTH_INVALID');
      }
    });
  });

  describe('bot magic link', () => {
    it('code → confirmed by the bot → polled once for a bootstrap token → exchanged once', async () => {
      process.env.BOT_USERNAME = 'shop_vpn_bot';
      const code = await t.http().post('/api/v1/auth/bot/login-codes').expect(201);
      delete process.env.BOT_USERNAME;
      expect(code.body.deep_link).toBe(`https://t.me/shop_vpn_bot?start=login_${code.body.code}`);
      const poll = () =>
        t
          .http()
          .post(`/api/v1/auth/bot/login-codes/${code.body.code}/poll`)
          .send({ poll_secret: code.body.poll_secret });

      await poll().expect(200, { status: 'pending' });
      const wrongSecret = await t
        .http()
        .post(`/api/v1/auth/bot/login-codes/${code.body.code}/poll`)
        .send({ poll_secret: 'wrong' })
        .expect(404);
      expect(wrongSecret.body.code).toBe('NOT_FOUND');

      // The bot's two steps: the account opens the link, then presses Confirm.
      const account = await t.app.get(UsersService).telegramAccount(777000111, 'desk_user');
      const auth = t.app.get(AuthService);
      expect(await auth.openLoginCode(code.body.code, account.id)).not.toBeNull();
      await poll().expect(200, { status: 'pending' });
      expect(await auth.confirmLoginCode(code.body.code, account.id)).toBe(true);

      const polls = await Promise.all([poll(), poll(), poll()]);
      const tokens = polls.map((p) => p.body.bootstrap_token).filter(Boolean);
      expect(tokens).toHaveLength(1);

      const exchanged = await t
        .http()
        .post('/api/v1/auth/exchange')
        .send({ bootstrap_token: tokens[0] })
        .expect(200);
      expect(exchanged.body.user.tg_id).toBe(777000111);
      expect(parseSetCookies(exchanged.headers['set-cookie']).access_token).toBeDefined();

      const again = await t
        .http()
        .post('/api/v1/auth/exchange')
        .send({ bootstrap_token: tokens[0] })
        .expect(401);
      expect(again.body.code).toBe('BOOTSTRAP_INVALID');
    });
  });

  describe('bad input gets 400 with the contract body and no 500', () => {
    const cases: [string, unknown][] = [
      ['/api/v1/auth/seed/login', {}],
      ['/api/v1/auth/seed/login', { seed: 12 }],
      ['/api/v1/auth/seed/login', { seed: 'x'.repeat(6_000) }],
      ['/api/v1/auth/seed/login', { seed: 'abc', extra: 1 }],
      ['/api/v1/auth/seed/login', ['not', 'an', 'object']],
      ['/api/v1/auth/telegram', { id: 'one', first_name: 'A', auth_date: 1, hash: 'x' }],
      ['/api/v1/auth/telegram', { id: 1.5, first_name: 'A', auth_date: 1, hash: 'a'.repeat(64) }],
      ['/api/v1/auth/exchange', {}],
      ['/api/v1/auth/exchange', { bootstrap_token: null }],
      ['/api/v1/auth/admin/login', { username: 'a' }],
      ['/api/v1/auth/admin/login', { username: 'a', password: 'b'.repeat(6_000) }],
      ['/api/v1/auth/bot/login-codes/abc/poll', {}],
    ];
    it.each(cases.map(([p, b], i) => [`#${i} ${p}`, p, b] as const))(
      '%s',
      async (_label, path, body) => {
        const res = await t
          .http()
          .post(path)
          .send(body as object);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({
          statusCode: 400,
          error: 'Bad Request',
          code: 'VALIDATION_FAILED',
        });
        expect(Array.isArray(res.body.details)).toBe(true);
      },
    );

    it('non-JSON bodies are 400 too', async () => {
      const res = await t
        .http()
        .post('/api/v1/auth/seed/login')
        .set('Content-Type', 'application/json')
        .send('seed=abc');
      expect(res.status).toBe(400);
      const form = await t.http().post('/api/v1/auth/seed/login').type('form').send('seed=abc');
      expect(form.status).toBe(400);
      expect(form.body.code).toBe('VALIDATION_FAILED');
    });

    it('writes nothing on bad input', async () => {
      const [{ n: before }] = await t.dataSource.query('SELECT count(*)::int AS n FROM users');
      await t.http().post('/api/v1/auth/telegram').send({ id: -1 }).expect(400);
      await t
        .http()
        .post('/api/v1/auth/seed/login')
        .send({ seed: 'abc', role: 'owner' })
        .expect(400);
      const [{ n: after }] = await t.dataSource.query('SELECT count(*)::int AS n FROM users');
      expect(after).toBe(before);
    });
  });
});

/**
 * Its own app, after the one above has closed: passport's strategies are global to the process, so
 * two apps open at once would check each other's sessions.
 */
describe('session cookies in development', () => {
  let dev: TestApp;
  beforeAll(async () => {
    dev = await startTestApp({ NODE_ENV: 'development' });
  });
  afterAll(() => dev.close());

  it('are not Secure, so plain HTTP at any address keeps them: seed and staff sign-in', async () => {
    // A browser drops a Secure cookie over http://<the machine's address>:3000 (issue 42).
    const staff = await newUser(dev, 'moderator');
    const signIns = [
      await dev.http().post('/api/v1/auth/seed').expect(201),
      await dev
        .http()
        .post('/api/v1/auth/admin/login')
        .send({ username: staff.user.username, password: staff.password })
        .expect(200),
    ];
    for (const signIn of signIns) {
      const cookies = parseSetCookies(signIn.headers['set-cookie']);
      for (const name of ['access_token', 'refresh_token']) {
        expect([name, cookies[name].attributes]).toEqual([
          name,
          expect.objectContaining({ httponly: true, samesite: 'Lax' }),
        ]);
        expect([name, cookies[name].attributes.secure]).toEqual([name, undefined]);
      }
      const cookie = Object.entries(cookies)
        .map(([name, c]) => `${name}=${c.value}`)
        .join('; ');
      await dev.http().get('/api/v1/users/me').set('Cookie', cookie).expect(200);
    }
  });
});
