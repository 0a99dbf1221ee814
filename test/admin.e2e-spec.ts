import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';

const API = '/api/v1';
const PASSWORD = 'a-long-enough-password';

describe('staff administration and the audit log', () => {
  let t: TestApp;
  let owner: TestUser;
  let moderator: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    moderator = await newUser(t, 'moderator');
  });
  afterAll(() => t.close());

  const count = async (table: string): Promise<number> => {
    const rows: { n: string }[] = await t.dataSource.query(`SELECT count(*) AS n FROM ${table}`);
    return Number(rows[0].n);
  };
  const userRow = async (id: string): Promise<Record<string, unknown>> => {
    const rows: Record<string, unknown>[] = await t.dataSource.query(
      'SELECT role, username, can_manage_nodes, commission_percent, partner_code, traffic_limit_bytes FROM users WHERE id = $1',
      [id],
    );
    return rows[0];
  };
  const auditFor = async (targetId: string): Promise<Record<string, unknown>[]> =>
    t.dataSource.query(
      'SELECT actor_id, action, target_type, target_id, before, after, created_at FROM audit_log WHERE target_id = $1 ORDER BY created_at, id',
      [targetId],
    );

  it('support accounts: the owner creates them, a moderator may not', async () => {
    const created = await t
      .http()
      .post(`${API}/admin/support`)
      .set(owner.bearer)
      .send({ username: 'help.desk-1', password: PASSWORD })
      .expect(201);
    expect(created.body).toMatchObject({
      role: 'support',
      username: 'help.desk-1',
      can_manage_nodes: false,
      partner_code: null,
      commission_percent: null,
    });
    expect(await userRow(created.body.id)).toMatchObject({ role: 'support' });

    // The new account signs in with its password.
    await t
      .http()
      .post(`${API}/auth/admin/login`)
      .send({ username: 'help.desk-1', password: PASSWORD })
      .expect(200);

    const users = await count('users');
    const refused = await t
      .http()
      .post(`${API}/admin/support`)
      .set(moderator.bearer)
      .send({ username: 'help-desk-2', password: PASSWORD })
      .expect(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    expect(await count('users')).toBe(users);
  });

  it('moderators: owner only', async () => {
    const created = await t
      .http()
      .post(`${API}/admin/moderators`)
      .set(owner.bearer)
      .send({ username: 'mod_two', password: PASSWORD })
      .expect(201);
    expect(created.body.role).toBe('moderator');
    await t
      .http()
      .post(`${API}/admin/moderators`)
      .set(moderator.bearer)
      .send({ username: 'mod_three', password: PASSWORD })
      .expect(403);
  });

  it('partners: a moderator creates them; codes given, generated, or taken', async () => {
    const given = await t
      .http()
      .post(`${API}/admin/partners`)
      .set(moderator.bearer)
      .send({
        username: 'partner_a',
        password: PASSWORD,
        commission_percent: 12.5,
        partner_code: 'Spring_Sale-1',
      })
      .expect(201);
    // Codes match in any case, so they are kept in lower case.
    expect(given.body).toMatchObject({
      role: 'partner',
      partner_code: 'spring_sale-1',
      commission_percent: 12.5,
    });
    expect(await userRow(given.body.id)).toMatchObject({ commission_percent: '12.50' });

    const generated = await t
      .http()
      .post(`${API}/admin/partners`)
      .set(owner.bearer)
      .send({ username: 'partner_b', password: PASSWORD, commission_percent: 99.99 })
      .expect(201);
    expect(generated.body.partner_code).toMatch(/^[a-z0-9]{8}$/);
    expect(generated.body.commission_percent).toBe(99.99);

    const users = await count('users');
    const taken = await t
      .http()
      .post(`${API}/admin/partners`)
      .set(owner.bearer)
      .send({
        username: 'partner_c',
        password: PASSWORD,
        commission_percent: 0,
        partner_code: 'SPRING_SALE-1',
      })
      .expect(409);
    expect(taken.body.code).toBe('CONFLICT');
    expect(taken.body.message).toMatch(/partner code/);
    expect(await count('users')).toBe(users);
  });

  it('one username, ten concurrent creations: exactly one 201', async () => {
    const before = await count('users');
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t
          .http()
          .post(`${API}/admin/${i % 2 ? 'moderators' : 'support'}`)
          .set(owner.bearer)
          .send({ username: 'racer', password: PASSWORD }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(9).fill(409)]);
    for (const r of responses.filter((r) => r.status === 409))
      expect(r.body.code).toBe('USERNAME_TAKEN');
    expect(await count('users')).toBe(before + 1);
    const audit: { n: string }[] = await t.dataSource.query(
      `SELECT count(*) AS n FROM audit_log WHERE action = 'staff.created' AND after->>'username' = 'racer'`,
    );
    expect(Number(audit[0].n)).toBe(1);
  });

  it('the default limit applies at the next /users/me of users without an override', async () => {
    const plain = await newUser(t, 'seed');
    const pinned = await newUser(t, 'telegram', { trafficLimitBytes: '777' });
    const me = (u: TestUser) => t.http().get(`${API}/users/me`).set(u.bearer).expect(200);
    expect((await me(plain)).body.traffic.limit_bytes).toBe(
      Number(t.settings.trafficLimitDefaultBytes),
    );

    const big = Number.MAX_SAFE_INTEGER;
    const changed = await t
      .http()
      .patch(`${API}/admin/settings/traffic-limit`)
      .set(moderator.bearer)
      .send({ default_bytes: big })
      .expect(200);
    expect(changed.body).toEqual({ default_bytes: big });
    expect((await me(plain)).body.traffic.limit_bytes).toBe(big);
    expect((await me(pinned)).body.traffic.limit_bytes).toBe(777);

    await t
      .http()
      .patch(`${API}/admin/settings/traffic-limit`)
      .set(owner.bearer)
      .send({ default_bytes: 5_000_000 })
      .expect(200);
    expect((await me(plain)).body.traffic.limit_bytes).toBe(5_000_000);
    const audit = await auditFor('traffic_limit_default_bytes');
    expect(audit.map((a) => [a.actor_id, a.before, a.after])).toEqual([
      [
        moderator.user.id,
        { default_bytes: Number(t.settings.trafficLimitDefaultBytes), stored: false },
        { default_bytes: big, stored: true },
      ],
      [
        owner.user.id,
        { default_bytes: big, stored: true },
        { default_bytes: 5_000_000, stored: true },
      ],
    ]);
  });

  it('a per-user override, then clearing it', async () => {
    const target = await newUser(t, 'seed');
    const set = await t
      .http()
      .patch(`${API}/admin/users/${target.user.id}/traffic-limit`)
      .set(moderator.bearer)
      .send({ traffic_limit_bytes: 123_456 })
      .expect(200);
    expect(set.body.traffic.limit_bytes).toBe(123_456);
    expect(await userRow(target.user.id)).toMatchObject({ traffic_limit_bytes: '123456' });

    const cleared = await t
      .http()
      .patch(`${API}/admin/users/${target.user.id}/traffic-limit`)
      .set(owner.bearer)
      .send({ traffic_limit_bytes: null })
      .expect(200);
    const current = await t
      .http()
      .patch(`${API}/admin/settings/traffic-limit`)
      .set(owner.bearer)
      .send({ default_bytes: 5_000_000 })
      .expect(200);
    expect(cleared.body.traffic.limit_bytes).toBe(current.body.default_bytes);
    expect(await userRow(target.user.id)).toMatchObject({ traffic_limit_bytes: null });

    const audit = await auditFor(target.user.id);
    expect(audit.map((a) => [a.action, a.actor_id, a.before, a.after])).toEqual([
      [
        'user.traffic_limit_changed',
        moderator.user.id,
        { traffic_limit_bytes: null },
        { traffic_limit_bytes: 123_456 },
      ],
      [
        'user.traffic_limit_changed',
        owner.user.id,
        { traffic_limit_bytes: 123_456 },
        { traffic_limit_bytes: null },
      ],
    ]);
  });

  it('node access: owner toggles it on a moderator; other roles are a conflict', async () => {
    const target = await newUser(t, 'moderator');
    const on = await t
      .http()
      .patch(`${API}/admin/users/${target.user.id}/node-access`)
      .set(owner.bearer)
      .send({ can_manage_nodes: true })
      .expect(200);
    expect(on.body.can_manage_nodes).toBe(true);
    expect(await userRow(target.user.id)).toMatchObject({ can_manage_nodes: true });
    await t
      .http()
      .patch(`${API}/admin/users/${target.user.id}/node-access`)
      .set(owner.bearer)
      .send({ can_manage_nodes: false })
      .expect(200)
      .expect((res) => expect(res.body.can_manage_nodes).toBe(false));
    const audit = await auditFor(target.user.id);
    expect(audit.map((a) => [a.action, a.actor_id, a.before, a.after])).toEqual([
      [
        'user.node_access_changed',
        owner.user.id,
        { can_manage_nodes: false },
        { can_manage_nodes: true },
      ],
      [
        'user.node_access_changed',
        owner.user.id,
        { can_manage_nodes: true },
        { can_manage_nodes: false },
      ],
    ]);

    for (const kind of ['telegram', 'seed', 'partner', 'support'] as const) {
      const other = await newUser(t, kind);
      const conflict = await t
        .http()
        .patch(`${API}/admin/users/${other.user.id}/node-access`)
        .set(owner.bearer)
        .send({ can_manage_nodes: true })
        .expect(409);
      expect(conflict.body).toMatchObject({ code: 'CONFLICT' });
      expect(conflict.body.message).toMatch(/owner, moderator/);
      expect(await userRow(other.user.id)).toMatchObject({ can_manage_nodes: false });
      expect(await auditFor(other.user.id)).toEqual([]);
    }

    await t
      .http()
      .patch(`${API}/admin/users/${target.user.id}/node-access`)
      .set(moderator.bearer)
      .send({ can_manage_nodes: true })
      .expect(403);
  });

  it('an unknown id is 404 NO_USER', async () => {
    const id = randomUUID();
    const calls = [
      t.http().get(`${API}/admin/users/${id}`).set(moderator.bearer),
      t
        .http()
        .patch(`${API}/admin/users/${id}/traffic-limit`)
        .set(moderator.bearer)
        .send({ traffic_limit_bytes: 1 }),
      t
        .http()
        .patch(`${API}/admin/users/${id}/node-access`)
        .set(owner.bearer)
        .send({ can_manage_nodes: true }),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'NO_USER', message: 'user not found' });
    }
    const found = await t
      .http()
      .get(`${API}/admin/users/${moderator.user.id}`)
      .set(moderator.bearer)
      .expect(200);
    expect(found.body).toMatchObject({ id: moderator.user.id, role: 'moderator' });
  });

  it('bad input is 400 VALIDATION_FAILED and writes nothing', async () => {
    const target = await newUser(t, 'moderator');
    const partner = (fields: Record<string, unknown>) => ({
      username: 'fine_name',
      password: PASSWORD,
      commission_percent: 10,
      ...fields,
    });
    const cases: [string, string, unknown][] = [
      ['post', '/admin/moderators', { username: 'short_pw', password: 'elevenchars' }],
      ['post', '/admin/moderators', { username: 'x', password: PASSWORD }],
      ['post', '/admin/moderators', { username: 'Upper', password: PASSWORD }],
      ['post', '/admin/moderators', { username: 'a'.repeat(33), password: PASSWORD }],
      ['post', '/admin/moderators', { username: 'fine_name', password: 'p'.repeat(129) }],
      ['post', '/admin/support', { username: 'fine_name', password: PASSWORD, role: 'owner' }],
      ['post', '/admin/support', { username: 'fine_name' }],
      ['post', '/admin/partners', partner({ commission_percent: 100.001 })],
      ['post', '/admin/partners', partner({ commission_percent: 1.234 })],
      ['post', '/admin/partners', partner({ commission_percent: -1 })],
      ['post', '/admin/partners', partner({ commission_percent: 1e-7 })],
      ['post', '/admin/partners', partner({ commission_percent: '10' })],
      ['post', '/admin/partners', partner({ commission_percent: undefined })],
      ['post', '/admin/partners', partner({ partner_code: 'no spaces' })],
      ['post', '/admin/partners', partner({ partner_code: 'ab' })],
      ['post', '/admin/partners', partner({ can_manage_nodes: true })],
      ['patch', `/admin/users/${target.user.id}/traffic-limit`, { traffic_limit_bytes: 0 }],
      ['patch', `/admin/users/${target.user.id}/traffic-limit`, { traffic_limit_bytes: -5 }],
      ['patch', `/admin/users/${target.user.id}/traffic-limit`, { traffic_limit_bytes: 1.5 }],
      ['patch', `/admin/users/${target.user.id}/traffic-limit`, { traffic_limit_bytes: 2 ** 53 }],
      ['patch', `/admin/users/${target.user.id}/traffic-limit`, { traffic_limit_bytes: '100' }],
      ['patch', `/admin/users/${target.user.id}/traffic-limit`, {}],
      ['patch', `/admin/users/not-a-uuid/traffic-limit`, { traffic_limit_bytes: 100 }],
      ['patch', `/admin/users/${target.user.id}/node-access`, { can_manage_nodes: 'yes' }],
      ['patch', `/admin/users/${target.user.id}/node-access`, { can_manage_nodes: true, x: 1 }],
      ['patch', `/admin/users/123/node-access`, { can_manage_nodes: true }],
      ['patch', '/admin/settings/traffic-limit', { default_bytes: 0 }],
      ['patch', '/admin/settings/traffic-limit', { default_bytes: null }],
      ['patch', '/admin/settings/traffic-limit', { default_bytes: 1e300 }],
      ['patch', '/admin/settings/traffic-limit', { default_bytes: 10, extra: true }],
      ['get', '/admin/users/not-a-uuid', undefined],
    ];
    const users = await count('users');
    const audit = await count('audit_log');
    const settings: unknown[] = await t.dataSource.query('SELECT * FROM app_settings');
    for (const [method, path, body] of cases) {
      const call =
        method === 'post'
          ? t.http().post(`${API}${path}`)
          : method === 'patch'
            ? t.http().patch(`${API}${path}`)
            : t.http().get(`${API}${path}`);
      const response = await call.set(owner.bearer).send(body as object);
      expect({ path, body, status: response.status, code: response.body.code }).toEqual({
        path,
        body,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    expect(await count('users')).toBe(users);
    expect(await count('audit_log')).toBe(audit);
    expect(await t.dataSource.query('SELECT * FROM app_settings')).toEqual(settings);
    expect(await userRow(target.user.id)).toMatchObject({
      traffic_limit_bytes: null,
      can_manage_nodes: false,
    });
  });

  it('GET /admin/users: search, role filter and cursor pages', async () => {
    const tg = await newUser(t, 'telegram');
    const seeds = await Promise.all([newUser(t, 'seed'), newUser(t, 'seed')]);
    const staffName = 'zeta_Search'.toLowerCase();
    await t
      .http()
      .post(`${API}/admin/support`)
      .set(owner.bearer)
      .send({ username: staffName, password: PASSWORD })
      .expect(201);
    const list = (query: Record<string, string | number>) =>
      t.http().get(`${API}/admin/users`).query(query).set(moderator.bearer);

    const byPrefix = await list({ q: 'ZETA_s' }).expect(200);
    expect(byPrefix.body.items.map((u: { username: string }) => u.username)).toEqual([staffName]);
    const percentIsLiteral = await list({ q: 'zeta%' }).expect(200);
    expect(percentIsLiteral.body.items).toEqual([]);

    // A subscriber has no username of ours, only the Telegram one: found by its prefix, '@' or not.
    const tgName = `Zeta_Tg${tg.user.id.slice(0, 8)}`;
    await t.dataSource.query('UPDATE users SET tg_username = $1 WHERE id = $2', [
      tgName,
      tg.user.id,
    ]);
    for (const q of [tgName.toLowerCase(), `@${tgName.slice(0, 9).toUpperCase()}`]) {
      const byTgName = await list({ q }).expect(200);
      expect({ q, ids: byTgName.body.items.map((u: { id: string }) => u.id) }).toEqual({
        q,
        ids: [tg.user.id],
      });
    }
    const byTg = await list({ q: String(tg.user.tgId) }).expect(200);
    expect(byTg.body.items.map((u: { id: string }) => u.id)).toEqual([tg.user.id]);
    expect(byTg.body.items[0].tg_id).toBe(Number(tg.user.tgId));
    await list({ q: '99999999999999999999999' }).expect(200);

    const byId = await list({ q: seeds[0].user.id.toUpperCase() }).expect(200);
    expect(byId.body.items.map((u: { id: string }) => u.id)).toEqual([seeds[0].user.id]);
    // The start of an id, as the list shows it, with or without its dash.
    for (const q of [
      seeds[0].user.id.slice(0, 8),
      `${seeds[0].user.id.slice(0, 8)}…`,
      seeds[0].user.id.slice(0, 11),
    ]) {
      const byPrefix = await list({ q, limit: 100 }).expect(200);
      const ids = byPrefix.body.items.map((u: { id: string }) => u.id);
      expect(ids).toContain(seeds[0].user.id);
      expect(ids.every((id: string) => id.startsWith(q.replace('…', '')))).toBe(true);
    }
    // A partner by its code, in any case.
    const partner = await newUser(t, 'partner');
    const [{ partner_code: code }] = (await t.dataSource.query(
      'SELECT partner_code FROM users WHERE id = $1',
      [partner.user.id],
    )) as { partner_code: string }[];
    const byCode = await list({ q: code.toUpperCase() }).expect(200);
    expect(byCode.body.items.map((u: { id: string }) => u.id)).toEqual([partner.user.id]);

    const plain = await list({ role: 'none', limit: 100 }).expect(200);
    expect(plain.body.items.every((u: { role: unknown }) => u.role === null)).toBe(true);
    expect(plain.body.items.map((u: { id: string }) => u.id)).toEqual(
      expect.arrayContaining([tg.user.id, seeds[0].user.id, seeds[1].user.id]),
    );
    const owners = await list({ role: 'owner' }).expect(200);
    expect(owners.body.items.map((u: { id: string }) => u.id)).toEqual([owner.user.id]);

    // Walking pages of 2 returns every user once, newest first.
    const total = await count('users');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: {
        body: { items: { id: string; created_at: string }[]; next_cursor: string | null };
      } = await list(cursor ? { limit: 2, cursor } : { limit: 2 }).expect(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((u) => u.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    const order: { id: string }[] = await t.dataSource.query(
      'SELECT id FROM users ORDER BY created_at DESC, id DESC',
    );
    expect(seen).toEqual(order.map((r) => r.id));

    for (const bad of <Record<string, string | number>[]>[
      { role: 'admin' },
      { limit: 0 },
      { limit: 101 },
      { limit: 'ten' },
      { cursor: 'not-a-cursor!' },
      { cursor: Buffer.from('2024-13-01T00:00:00.000000Z|x').toString('base64url') },
      { q: 'a\u0000b' },
      { unknown: 1 },
    ]) {
      const response = await list(bad);
      expect({ bad, status: response.status, code: response.body.code }).toEqual({
        bad,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    await t.http().get(`${API}/admin/users`).set(tg.bearer).expect(403);
  });

  it('GET /admin/audit: owner only, newest first, paged', async () => {
    await t.http().get(`${API}/admin/audit`).set(moderator.bearer).expect(403);
    await t.http().get(`${API}/admin/audit`).expect(401);

    const all: Record<string, unknown>[] = await t.dataSource.query(
      'SELECT id, actor_id, action, target_type, target_id, before, after FROM audit_log ORDER BY created_at DESC, id DESC',
    );
    expect(all.length).toBeGreaterThan(3);
    const first = await t
      .http()
      .get(`${API}/admin/audit`)
      .query({ limit: 2 })
      .set(owner.bearer)
      .expect(200);
    expect(first.body.items).toHaveLength(2);
    expect(first.body.items[0]).toEqual({
      ...all[0],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    const second = await t
      .http()
      .get(`${API}/admin/audit`)
      .query({ limit: 2, cursor: first.body.next_cursor })
      .set(owner.bearer)
      .expect(200);
    expect([...first.body.items, ...second.body.items].map((e: { id: string }) => e.id)).toEqual(
      all.slice(0, 4).map((r) => r.id),
    );
    await t
      .http()
      .get(`${API}/admin/audit`)
      .query({ cursor: 'bogus' })
      .set(owner.bearer)
      .expect(400);

    const created: Record<string, unknown>[] = await t.dataSource.query(
      `SELECT actor_id, before, after FROM audit_log WHERE action = 'staff.created' AND after->>'username' = 'partner_a'`,
    );
    expect(created).toEqual([
      {
        actor_id: moderator.user.id,
        before: null,
        after: {
          username: 'partner_a',
          role: 'partner',
          commission_percent: 12.5,
          partner_code: 'spring_sale-1',
        },
      },
    ]);
  });

  it('GET /admin/audit filters: each given one must match, paged as the whole log is', async () => {
    const audit = (query: Record<string, string | number>) =>
      t.http().get(`${API}/admin/audit`).query(query).set(owner.bearer);
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
    const expected = async (where: string, params: unknown[]) =>
      ids(
        await t.dataSource.query(
          `SELECT id FROM audit_log WHERE ${where} ORDER BY created_at DESC, id DESC`,
          params,
        ),
      );

    const byAction = await expected(`action = 'staff.created'`, []);
    expect(byAction.length).toBeGreaterThan(1);
    expect(ids((await audit({ action: 'staff.created' }).expect(200)).body.items)).toEqual(
      byAction,
    );

    const byActor = await expected(`actor_id = $1`, [moderator.user.id]);
    expect(byActor.length).toBeGreaterThan(0);
    const both = await audit({ action: 'staff.created', actor_id: moderator.user.id }).expect(200);
    expect(ids(both.body.items)).toEqual(
      await expected(`action = 'staff.created' AND actor_id = $1`, [moderator.user.id]),
    );
    expect(
      both.body.items.every((e: { actor_id: string }) => e.actor_id === moderator.user.id),
    ).toBe(true);

    const [target] = (await t.dataSource.query(
      `SELECT target_type, target_id FROM audit_log WHERE target_id IS NOT NULL LIMIT 1`,
    )) as { target_type: string; target_id: string }[];
    const byTarget = await expected(`target_type = $1 AND target_id = $2`, [
      target.target_type,
      target.target_id,
    ]);
    expect(
      ids(
        (await audit({ target_type: target.target_type, target_id: target.target_id }).expect(200))
          .body.items,
      ),
    ).toEqual(byTarget);

    // A filtered list pages with its own cursor: one entry a page, every one once.
    const first = await audit({ action: 'staff.created', limit: 1 }).expect(200);
    const second = await audit({
      action: 'staff.created',
      limit: 1,
      cursor: first.body.next_cursor,
    }).expect(200);
    expect([...ids(first.body.items), ...ids(second.body.items)]).toEqual(byAction.slice(0, 2));

    expect((await audit({ action: 'no.such_action' }).expect(200)).body).toEqual({
      items: [],
      next_cursor: null,
    });
    for (const bad of <Record<string, string>[]>[
      { action: '' },
      { action: 'DROP TABLE' },
      { action: 'x'.repeat(65) },
      { actor_id: 'not-a-uuid' },
      { target_type: 'Plan!' },
      { target_id: 'a\u0000b' },
      { target_id: 'x'.repeat(101) },
    ]) {
      const response = await audit(bad);
      expect({ bad, status: response.status, code: response.body.code }).toEqual({
        bad,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    await t
      .http()
      .get(`${API}/admin/audit`)
      .query({ action: 'staff.created' })
      .set(moderator.bearer)
      .expect(403);
  });
});
