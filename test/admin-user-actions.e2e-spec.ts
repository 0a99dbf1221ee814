import { randomUUID } from 'node:crypto';
import { AccountsRepository } from '../src/users/accounts.repository';
import { startTestApp, TRUSTED_ORIGIN, type TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { createNode, subscribedUser } from './harness/nodes';

const API = '/api/v1';
const DAY = 86_400_000;

/**
 * What staff do to one account: move its subscription, reset its traffic, block and unblock it,
 * reset a staff password. Each answers the user, changes the row, and leaves one audit entry with
 * who, what and why.
 */
describe('staff actions on one account', () => {
  let t: TestApp;
  let owner: TestUser;
  let moderator: TestUser;
  let secret: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, moderator] = await Promise.all([newUser(t, 'owner'), newUser(t, 'moderator')]);
    secret = { 'X-Internal-Secret': t.settings.internalSecret };
    await savePlan(t, owner, { traffic_limit_bytes: 5000 });
  });
  afterAll(() => t.close());

  const post = (staff: TestUser, path: string, body?: object) => {
    const request = t.http().post(`${API}${path}`).set(staff.bearer);
    return body === undefined ? request : request.send(body);
  };
  const row = async (id: string) =>
    (
      await t.dataSource.query(
        `SELECT plan_name, subscription_expires_at, traffic_used_bytes, blocked_at, password_hash
           FROM users WHERE id = $1`,
        [id],
      )
    )[0] as Record<string, unknown>;
  const auditFor = (id: string) =>
    t.dataSource.query(
      `SELECT actor_id, action, before, after FROM audit_log WHERE target_id = $1
        ORDER BY created_at, id`,
      [id],
    ) as Promise<{ actor_id: string; action: string; before: unknown; after: unknown }[]>;

  describe('POST /admin/users/{id}/subscription', () => {
    it('gives a user without one a `manual` subscription of `days`, audited with the reason', async () => {
      const { user } = await newUser(t, 'seed');
      const before = Date.now();
      const response = await post(moderator, `/admin/users/${user.id}/subscription`, {
        days: 10,
        reason: 'support ticket 42',
      }).expect(200);
      const expires = Date.parse(response.body.subscription.expires_at);
      expect(expires).toBeGreaterThanOrEqual(before + 10 * DAY - 1000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 10 * DAY + 1000);
      expect(response.body).toMatchObject({
        id: user.id,
        subscription: { plan_name: 'manual', active: true },
        blocked_at: null,
      });
      expect(await auditFor(user.id)).toEqual([
        {
          actor_id: moderator.user.id,
          action: 'user.subscription_moved',
          before: { plan_name: null, expires_at: null },
          after: {
            plan_name: 'manual',
            expires_at: response.body.subscription.expires_at,
            days: 10,
            reason: 'support ticket 42',
          },
        },
      ]);
    });

    it('lengthens a running subscription from its end and keeps its plan; plan_name names a new one', async () => {
      const end = new Date(Date.now() + 20 * DAY);
      const { user } = await newUser(t, 'seed', {
        planName: 'monthly',
        subscriptionExpiresAt: end,
      });
      const response = await post(owner, `/admin/users/${user.id}/subscription`, {
        days: 5,
        plan_name: 'other',
        reason: 'goodwill',
      }).expect(200);
      expect(response.body.subscription).toEqual({
        plan_name: 'monthly',
        expires_at: new Date(end.getTime() + 5 * DAY).toISOString(),
        active: true,
        // Made running by the factory, with no start recorded.
        starts_at: null,
        waiting_first_use: false,
      });
      // The plan's limit applies, as for a bought subscription.
      expect(response.body.traffic.limit_bytes).toBe(5000);

      const expired = await newUser(t, 'seed', {
        planName: 'old',
        subscriptionExpiresAt: new Date(Date.now() - 3 * DAY),
      });
      const renamed = await post(owner, `/admin/users/${expired.user.id}/subscription`, {
        days: 1,
        plan_name: 'monthly',
        reason: 'comeback',
      }).expect(200);
      expect(renamed.body.subscription).toMatchObject({ plan_name: 'monthly', active: true });
    });

    it('a negative number shortens it, never below now', async () => {
      const end = new Date(Date.now() + 10 * DAY);
      const { user } = await newUser(t, 'seed', {
        planName: 'monthly',
        subscriptionExpiresAt: end,
      });
      const shorter = await post(owner, `/admin/users/${user.id}/subscription`, {
        days: -4,
        reason: 'refund of 4 days',
      }).expect(200);
      expect(shorter.body.subscription.expires_at).toBe(
        new Date(end.getTime() - 4 * DAY).toISOString(),
      );
      const ended = await post(owner, `/admin/users/${user.id}/subscription`, {
        days: -3650,
        reason: 'chargeback',
      }).expect(200);
      const endedAt = Date.parse(ended.body.subscription.expires_at);
      expect(endedAt).toBeLessThanOrEqual(Date.now());
      expect(endedAt).toBeGreaterThan(Date.now() - 60_000);
      expect(ended.body.subscription.active).toBe(false);
    });

    it('two staff extending one subscription at once: both counted, once each', async () => {
      const end = new Date(Date.now() + 30 * DAY);
      const { user } = await newUser(t, 'seed', {
        planName: 'monthly',
        subscriptionExpiresAt: end,
      });
      const rounds = 5;
      for (let i = 0; i < rounds; i++) {
        const answers = await Promise.all([
          post(owner, `/admin/users/${user.id}/subscription`, { days: 3, reason: `a${i}` }),
          post(moderator, `/admin/users/${user.id}/subscription`, { days: 7, reason: `b${i}` }),
        ]);
        expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      }
      const stored = (await row(user.id)).subscription_expires_at as Date;
      expect(stored.toISOString()).toBe(new Date(end.getTime() + rounds * 10 * DAY).toISOString());
      // In the order they applied (each moved the end later), each entry's before is the previous
      // one's after: no move read an end another had already moved.
      const entries = (await auditFor(user.id))
        .map((entry) => entry as { before: { expires_at: string }; after: { expires_at: string } })
        .sort((a, b) => Date.parse(a.after.expires_at) - Date.parse(b.after.expires_at));
      expect(entries).toHaveLength(rounds * 2);
      expect(entries[0].before.expires_at).toBe(end.toISOString());
      for (let i = 1; i < entries.length; i++) {
        expect(entries[i].before.expires_at).toBe(entries[i - 1].after.expires_at);
      }
    });
  });

  it('POST /admin/users/{id}/traffic/reset sets used traffic to 0, audited', async () => {
    const { user } = await newUser(t, 'seed', { trafficUsedBytes: '123456' });
    const response = await post(moderator, `/admin/users/${user.id}/traffic/reset`, {
      reason: 'counted twice',
    }).expect(200);
    expect(response.body.traffic.used_bytes).toBe(0);
    expect((await row(user.id)).traffic_used_bytes).toBe('0');
    expect(await auditFor(user.id)).toEqual([
      {
        actor_id: moderator.user.id,
        action: 'user.traffic_reset',
        before: { traffic_used_bytes: 123456 },
        after: { traffic_used_bytes: 0, reason: 'counted twice' },
      },
    ]);
  });

  describe('blocking', () => {
    let nodeId: string;

    beforeAll(async () => {
      nodeId = (await createNode(t, owner)).id;
      await t.dataSource.query(
        `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
        [nodeId],
      );
    });

    const routingToken = async (user: TestUser): Promise<string> => {
      const response = await t.http().get(`${API}/nodes/routing`).set(user.bearer).expect(200);
      return (response.body as { node_id: string; session_token: string }[]).find(
        (entry) => entry.node_id === nodeId,
      )!.session_token;
    };

    it('a blocked account: sessions end, sign-ins 403, validation `blocked`, limits inactive; unblocking lets it back', async () => {
      const subscriber = await subscribedUser(t);
      const seedLogin = await newUser(t, 'seed', {
        planName: 'monthly',
        subscriptionExpiresAt: new Date(Date.now() + DAY),
      });
      const token = await routingToken(seedLogin);
      const limits = () =>
        t
          .http()
          .get(`${API}/internal/limits?user_ids=${seedLogin.user.id},${subscriber.user.id}`)
          .set(secret)
          .expect(200);
      expect((await limits()).body.map((entry: { active: boolean }) => entry.active)).toEqual([
        true,
        true,
      ]);

      const blocked = await post(moderator, `/admin/users/${seedLogin.user.id}/block`, {
        reason: 'abuse report',
      }).expect(200);
      expect(Date.parse(blocked.body.blocked_at)).toBeGreaterThan(Date.now() - 60_000);

      // Its session ended at once: the access token is refused, the refresh cookie says why.
      await t.http().get(`${API}/users/me`).set(seedLogin.bearer).expect(401);
      const refresh = () =>
        t
          .http()
          .post(`${API}/auth/refresh`)
          .set('Cookie', `refresh_token=${seedLogin.session.refreshToken}`)
          .set('Origin', TRUSTED_ORIGIN);
      const refused = await refresh().expect(403);
      expect(refused.body).toMatchObject({ code: 'ACCOUNT_BLOCKED' });
      // Signing in again: 403 ACCOUNT_BLOCKED, and no session is made.
      const sessionsBefore = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM refresh_sessions WHERE user_id = $1`,
        [seedLogin.user.id],
      );
      const login = await t
        .http()
        .post(`${API}/auth/seed/login`)
        .send({ seed: seedLogin.seed })
        .expect(403);
      expect(login.body).toMatchObject({ code: 'ACCOUNT_BLOCKED' });
      expect(
        await t.dataSource.query(
          `SELECT count(*)::int AS n FROM refresh_sessions WHERE user_id = $1`,
          [seedLogin.user.id],
        ),
      ).toEqual(sessionsBefore);

      // A token fetched before the block no longer validates; the agent's next limits check ends it.
      const validation = await t
        .http()
        .post(`${API}/internal/validate`)
        .set(secret)
        .send({ token, node_id: nodeId })
        .expect(200);
      expect(validation.body).toEqual({ valid: false, reason: 'blocked' });
      expect((await limits()).body.map((entry: { active: boolean }) => entry.active)).toEqual([
        false,
        true,
      ]);

      await post(moderator, `/admin/users/${seedLogin.user.id}/unblock`).expect(200);
      // The block ended that session for good: unblocked, its refresh cookie is merely invalid.
      expect((await refresh().expect(401)).body).toMatchObject({ code: 'REFRESH_INVALID' });
      const back = await t
        .http()
        .post(`${API}/auth/seed/login`)
        .send({ seed: seedLogin.seed })
        .expect(200);
      expect(back.body.user.blocked_at).toBeNull();
      expect((await limits()).body[0].active).toBe(true);
      expect((await auditFor(seedLogin.user.id)).map((entry) => entry.action)).toEqual([
        'user.blocked',
        'user.unblocked',
      ]);
      expect((await auditFor(seedLogin.user.id))[0]).toMatchObject({
        actor_id: moderator.user.id,
        after: { reason: 'abuse report' },
      });
    });

    it('a session that outlived the block (started as it committed) gets 403 ACCOUNT_BLOCKED, routing too', async () => {
      const user = await subscribedUser(t);
      // The block's row change alone, without its ending of sessions: what a racing sign-in leaves.
      await t.app.get(AccountsRepository).setBlocked(user.user.id, true);
      const routing = await t.http().get(`${API}/nodes/routing`).set(user.bearer).expect(403);
      expect(routing.body).toMatchObject({ code: 'ACCOUNT_BLOCKED' });
      const refresh = await t
        .http()
        .post(`${API}/auth/refresh`)
        .set('Cookie', `refresh_token=${user.session.refreshToken}`)
        .set('Origin', TRUSTED_ORIGIN)
        .expect(403);
      expect(refresh.body).toMatchObject({ code: 'ACCOUNT_BLOCKED' });
    });

    it('staff accounts are the owner’s to block; the owner cannot block itself (403)', async () => {
      const other = await newUser(t, 'moderator');
      const partner = await newUser(t, 'partner');
      for (const target of [other, partner, owner]) {
        const refused = await post(moderator, `/admin/users/${target.user.id}/block`, {
          reason: 'x',
        }).expect(403);
        expect(refused.body).toMatchObject({ code: 'FORBIDDEN' });
      }
      const self = await post(owner, `/admin/users/${owner.user.id}/block`, { reason: 'x' });
      expect(self.status).toBe(403);
      expect(self.body).toMatchObject({ code: 'FORBIDDEN' });

      await post(owner, `/admin/users/${other.user.id}/block`, { reason: 'left the team' }).expect(
        200,
      );
      const login = await t
        .http()
        .post(`${API}/auth/admin/login`)
        .send({ username: other.user.username, password: other.password })
        .expect(403);
      expect(login.body).toMatchObject({ code: 'ACCOUNT_BLOCKED' });
      // A wrong password stays INVALID_CREDENTIALS: the block is not shown to guessers.
      await t
        .http()
        .post(`${API}/auth/admin/login`)
        .send({ username: other.user.username, password: 'not-the-password-at-all' })
        .expect(401);
      await post(moderator, `/admin/users/${other.user.id}/unblock`).expect(403);
      await post(owner, `/admin/users/${other.user.id}/unblock`).expect(200);
      await t
        .http()
        .post(`${API}/auth/admin/login`)
        .send({ username: other.user.username, password: other.password })
        .expect(200);
      expect(await auditFor(owner.user.id)).toEqual([]);
      expect(await auditFor(partner.user.id)).toEqual([]);
    });

    it('blocking twice changes nothing the second time', async () => {
      const { user } = await newUser(t, 'seed');
      const first = await post(owner, `/admin/users/${user.id}/block`, { reason: 'a' }).expect(200);
      const second = await post(owner, `/admin/users/${user.id}/block`, { reason: 'b' }).expect(
        200,
      );
      expect(second.body.blocked_at).toBe(first.body.blocked_at);
      expect(await auditFor(user.id)).toHaveLength(1);
    });
  });

  describe('POST /admin/users/{id}/password', () => {
    it('the owner sets a staff password: the old one and every session stop working', async () => {
      const target = await newUser(t, 'support');
      const password = 'a-brand-new-password-42';
      await post(owner, `/admin/users/${target.user.id}/password`, { password }).expect(204);
      await t.http().get(`${API}/users/me`).set(target.bearer).expect(401);
      await t
        .http()
        .post(`${API}/auth/admin/login`)
        .send({ username: target.user.username, password: target.password })
        .expect(401);
      await t
        .http()
        .post(`${API}/auth/admin/login`)
        .send({ username: target.user.username, password })
        .expect(200);
      const entries = await auditFor(target.user.id);
      expect(entries).toEqual([
        {
          actor_id: owner.user.id,
          action: 'user.password_reset',
          before: null,
          after: { password_changed: true, sessions_ended: true },
        },
      ]);
      expect(JSON.stringify(entries)).not.toContain(password);
    });

    it('an ordinary account has no password to set (409); a moderator may not (403)', async () => {
      const { user } = await newUser(t, 'seed');
      const refused = await post(owner, `/admin/users/${user.id}/password`, {
        password: 'long-enough-password',
      }).expect(409);
      expect(refused.body).toMatchObject({ code: 'CONFLICT' });
      expect((await row(user.id)).password_hash).toBeNull();
      await post(moderator, `/admin/users/${owner.user.id}/password`, {
        password: 'long-enough-password',
      }).expect(403);
    });
  });

  describe('staff never act on their own account; staff accounts are the owner’s (403)', () => {
    /** Every action on one account, with a body it would accept. */
    const ACTIONS: [method: 'post' | 'patch', action: string, body?: object][] = [
      ['post', 'subscription', { days: 3650, reason: 'r' }],
      ['post', 'traffic/reset', { reason: 'r' }],
      ['patch', 'traffic-limit', { traffic_limit_bytes: Number.MAX_SAFE_INTEGER }],
      ['post', 'block', { reason: 'r' }],
      ['post', 'unblock'],
      ['post', 'password', { password: 'a-new-long-enough-password' }],
      ['patch', 'node-access', { can_manage_nodes: true }],
    ];
    const act = (staff: TestUser, method: 'post' | 'patch', path: string, body?: object) => {
      const request = t.http()[method](`${API}/admin/users/${path}`).set(staff.bearer);
      return body === undefined ? request : request.send(body);
    };
    const fullRow = async (id: string) =>
      (
        await t.dataSource.query(
          `SELECT plan_name, subscription_expires_at, traffic_used_bytes, traffic_limit_bytes,
                  blocked_at, password_hash, can_manage_nodes
             FROM users WHERE id = $1`,
          [id],
        )
      )[0] as Record<string, unknown>;
    const refusedAll = async (actor: TestUser, target: TestUser) => {
      const before = await fullRow(target.user.id);
      for (const [method, action, body] of ACTIONS) {
        const response = await act(actor, method, `${target.user.id}/${action}`, body);
        expect([action, response.status, response.body.code]).toEqual([action, 403, 'FORBIDDEN']);
      }
      expect(await fullRow(target.user.id)).toEqual(before);
      expect(await auditFor(target.user.id)).toEqual([]);
    };

    it('a moderator on its own account', async () => {
      const self = await newUser(t, 'moderator', { trafficUsedBytes: '7' });
      await refusedAll(self, self);
    });

    it('a moderator on any other staff account, the owner’s included', async () => {
      const actor = await newUser(t, 'moderator');
      for (const kind of ['moderator', 'support', 'partner'] as const) {
        await refusedAll(actor, await newUser(t, kind, { trafficUsedBytes: '7' }));
      }
      await refusedAll(actor, owner);
    });

    it('the owner on its own account', async () => {
      await refusedAll(owner, owner);
    });

    it('the owner acts on a moderator', async () => {
      const target = await newUser(t, 'moderator', { trafficUsedBytes: '7' });
      for (const [method, action, body] of ACTIONS) {
        const response = await act(owner, method, `${target.user.id}/${action}`, body);
        expect([action, response.status]).toEqual([action, action === 'password' ? 204 : 200]);
      }
      expect(await fullRow(target.user.id)).toMatchObject({
        plan_name: 'manual',
        traffic_used_bytes: '0',
        traffic_limit_bytes: String(Number.MAX_SAFE_INTEGER),
        blocked_at: null,
        can_manage_nodes: true,
      });
      expect((await auditFor(target.user.id)).map((entry) => entry.action)).toEqual([
        'user.subscription_moved',
        'user.traffic_reset',
        'user.traffic_limit_changed',
        'user.blocked',
        'user.unblocked',
        'user.password_reset',
        'user.node_access_changed',
      ]);
    });
  });

  describe('staff text must be well-formed and visible: 400 naming the field, nothing changed', () => {
    /** An unpaired surrogate: JSON may carry it, UTF-8 and PostgreSQL's json cannot. */
    const UNPAIRED = ['a\ud800b', 'a\udc00b', '\ud83d'];
    /** Text a reader cannot see, or that reads other than it is stored. */
    const INVISIBLE = [
      '\u200b',
      'acct-\u202e24-tcca',
      'ok\u2066x',
      'zero\u200bwidth',
      'word\u2060joiner',
      'bom\ufeff',
      'tab\tbetween',
      'line\nbreak',
      'bell\u0007',
      '\u3164',
      'filler \u3164 inside',
      'a\u115fb',
      'a\uffa0b',
      'e' + '\u0301'.repeat(5),
      '\u0301\u0301',
      ' \u00a0 ',
    ];
    const REASON_ACTIONS: [action: string, body: (reason: string) => object][] = [
      ['subscription', (reason) => ({ days: 10, reason })],
      ['traffic/reset', (reason) => ({ reason })],
      ['block', (reason) => ({ reason })],
    ];

    it.each(REASON_ACTIONS)('%s with an unpaired surrogate in its reason', async (action, body) => {
      const { user } = await newUser(t, 'seed', { trafficUsedBytes: '7' });
      const before = await row(user.id);
      for (const reason of UNPAIRED) {
        const response = await post(moderator, `/admin/users/${user.id}/${action}`, body(reason));
        expect([reason, response.status, response.body.code]).toEqual([
          reason,
          400,
          'VALIDATION_FAILED',
        ]);
        expect(response.body.details).toEqual([
          { field: 'reason', message: expect.stringMatching(/well-formed/), rule: 'isWellFormed' },
        ]);
      }
      expect(await row(user.id)).toEqual(before);
      expect(await auditFor(user.id)).toEqual([]);
    });

    it('traffic/reset with a reason nobody can read as stored', async () => {
      const { user } = await newUser(t, 'seed', { trafficUsedBytes: '7' });
      const before = await row(user.id);
      for (const reason of INVISIBLE) {
        const response = await post(moderator, `/admin/users/${user.id}/traffic/reset`, {
          reason,
        });
        expect([reason, response.status, response.body.code]).toEqual([
          reason,
          400,
          'VALIDATION_FAILED',
        ]);
        expect(response.body.details.map((d: { field: string }) => d.field)).toEqual(['reason']);
      }
      expect(await row(user.id)).toEqual(before);
      expect(await auditFor(user.id)).toEqual([]);
      // Any script, emoji made with joiners, and a few accents on a letter stay welcome.
      for (const reason of ['Вернули 3 дня', 'خطأ في الدفع', '👩‍💻 asked', 'e\u0301\u0302 ok']) {
        await post(moderator, `/admin/users/${user.id}/traffic/reset`, { reason }).expect(200);
      }
    });
  });

  describe('bad input answers 400 VALIDATION_FAILED naming the field, and changes nothing', () => {
    const long = 'x'.repeat(201);
    it.each([
      ['subscription', { reason: 'r' }, 'days'],
      ['subscription', { days: 0, reason: 'r' }, 'days'],
      ['subscription', { days: 3651, reason: 'r' }, 'days'],
      ['subscription', { days: -3651, reason: 'r' }, 'days'],
      ['subscription', { days: 1.5, reason: 'r' }, 'days'],
      ['subscription', { days: '10', reason: 'r' }, 'days'],
      ['subscription', { days: 1 }, 'reason'],
      ['subscription', { days: 1, reason: '' }, 'reason'],
      ['subscription', { days: 1, reason: '   ' }, 'reason'],
      ['subscription', { days: 1, reason: long }, 'reason'],
      ['subscription', { days: 1, reason: 5 }, 'reason'],
      ['subscription', { days: 1, reason: 'r', plan_name: 'Not A Plan' }, 'plan_name'],
      ['subscription', { days: 1, reason: 'r', extra: true }, 'extra'],
      ['traffic/reset', {}, 'reason'],
      ['block', { reason: long }, 'reason'],
      ['unblock', { reason: 'no body here' }, 'body'],
      ['password', { password: 'short' }, 'password'],
      ['password', {}, 'password'],
    ])('%s %j', async (action, body, field) => {
      const target = await newUser(t, 'moderator', { trafficUsedBytes: '7' });
      const before = await row(target.user.id);
      const response = await post(owner, `/admin/users/${target.user.id}/${action}`, body);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(response.body.details.map((d: { field: string }) => d.field)).toContain(field);
      expect(await row(target.user.id)).toEqual(before);
    });

    it.each(['subscription', 'traffic/reset', 'block', 'unblock', 'password'])(
      '%s of an unknown user is 404 NO_USER, of a malformed id 400',
      async (action) => {
        const body =
          action === 'password'
            ? { password: 'long-enough-password' }
            : action === 'subscription'
              ? { days: 1, reason: 'r' }
              : action === 'unblock'
                ? undefined
                : { reason: 'r' };
        const missing = await post(owner, `/admin/users/${randomUUID()}/${action}`, body);
        expect(missing.status).toBe(404);
        expect(missing.body.code).toBe('NO_USER');
        const malformed = await post(owner, `/admin/users/not-a-uuid/${action}`, body);
        expect(malformed.status).toBe(400);
        expect(malformed.body.code).toBe('VALIDATION_FAILED');
      },
    );
  });

  it('GET /admin/plans lists every plan, inactive ones too', async () => {
    await t
      .http()
      .put(`${API}/admin/plans/retired`)
      .set(owner.bearer)
      .send({ duration_days: 7, traffic_limit_bytes: 1000, prices: { USD: '99' }, active: false })
      .expect(200);
    const all = await t.http().get(`${API}/admin/plans`).set(moderator.bearer).expect(200);
    expect(all.body).toEqual([
      {
        name: 'retired',
        duration_days: 7,
        traffic_limit_bytes: 1000,
        prices: { USD: '99' },
        device_limit: 3,
        traffic_reset: 'none',
        reset_day: 1,
        starts: 'on_purchase',
        on_hold_max_days: 30,
        display: {},
        active: false,
      },
      {
        name: 'monthly',
        duration_days: 30,
        traffic_limit_bytes: 5000,
        prices: { USD: '499' },
        device_limit: 3,
        traffic_reset: 'none',
        reset_day: 1,
        starts: 'on_purchase',
        on_hold_max_days: 30,
        display: {},
        active: true,
      },
    ]);
    const onSale = await t.http().get(`${API}/plans`).expect(200);
    expect(onSale.body.map((plan: { name: string }) => plan.name)).toEqual(['monthly']);
  });
});
