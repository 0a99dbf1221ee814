import { randomUUID } from 'node:crypto';
import { WHOLE_UUID_RANGE } from '../src/common/uuid';
import { Clock } from '../src/billing/clock';
import { SWEEP_SETTLE_MS, TrafficResetService } from '../src/billing/traffic-reset.service';
import { SubscriptionsRepository } from '../src/users/subscriptions.repository';
import {
  atMidnightSql,
  midnightAtOrBefore,
  nextResetAfter,
  nextResetSql,
  type TrafficReset,
} from '../src/users/traffic-reset';
import { resetDueSql, UserTrafficRepository } from '../src/users/user-traffic.repository';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { createNode } from './harness/nodes';

const DAY = 86_400_000;
const LIMIT = 1_000_000;

describe('plans: traffic resets each period, once, across instances (issue 45)', () => {
  let t: TestApp;
  /** A second instance of the service on the same database. */
  let t2: TestApp;
  let owner: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestApp();
    t2 = await startTestApp({}, { database: t.database });
    owner = await newUser(t, 'owner');
    nodeId = (await createNode(t, owner)).id;
  });
  afterAll(async () => {
    await t2.close();
    await t.close();
  });

  // Whatever each test did (purchases, trials, first use, plan rule changes, reset batches of both
  // kinds, subscriptions that ended), the job's table of next resets holds every next reset of
  // `users` that is not at a midnight, and nothing else (migration 0027).
  afterEach(async () => {
    const differing = (await t.dataSource.query(
      `SELECT u.id, u.traffic_reset_at, n.reset_at
         FROM users u LEFT JOIN next_traffic_resets n ON n.user_id = u.id
        WHERE n.reset_at IS DISTINCT FROM
              CASE WHEN NOT ${atMidnightSql('u.traffic_reset_at')} THEN u.traffic_reset_at END`,
    )) as unknown[];
    expect(differing).toEqual([]);
  });

  /** Sets both instances' clock to `at`. */
  const clockAt = (at: Date) => {
    for (const app of [t, t2]) app.app.get(Clock).now = () => at.getTime();
  };

  const savePlan = (name: string, fields: Record<string, unknown>) =>
    t
      .http()
      .put(`/api/v1/admin/plans/${name}`)
      .set(owner.bearer)
      .send({
        duration_days: 365,
        traffic_limit_bytes: LIMIT,
        prices: { USD: '499' },
        active: true,
        ...fields,
      });

  /** `count` subscribers who bought `plan` just now, each over the plan's limit by a report. */
  async function overLimitSubscribers(plan: string, count: number): Promise<TestUser[]> {
    const users = await Promise.all(Array.from({ length: count }, () => newUser(t)));
    for (const user of users) {
      await t.app.get(SubscriptionsRepository).extendForPlan(user.user.id, plan);
    }
    await t
      .http()
      .post('/api/v1/internal/traffic')
      .set('X-Internal-Secret', t.settings.internalSecret)
      .send({
        node_id: nodeId,
        report_id: randomUUID(),
        entries: users.map((u) => ({
          user_id: u.user.id,
          bytes_up: 500_000,
          bytes_down: 1_000_000,
        })),
      })
      .expect(200);
    return users;
  }

  const limits = async (users: TestUser[]) =>
    (
      await t
        .http()
        .get(`/api/v1/internal/limits?user_ids=${users.map((u) => u.user.id).join(',')}`)
        .set('X-Internal-Secret', t.settings.internalSecret)
        .expect(200)
    ).body as { user_id: string; traffic_used_bytes: number; traffic_limit_bytes: number }[];

  const me = async (user: TestUser) =>
    (await t.http().get('/api/v1/users/me').set(user.bearer).expect(200)).body as {
      traffic: { used_bytes: number; resets_at: string | null };
      subscription: {
        active: boolean;
        starts_at: string | null;
        waiting_first_use: boolean;
        expires_at: string;
      };
    };

  const resetsOf = async (users: TestUser[]) =>
    (await t.dataSource.query(
      `SELECT user_id, period_start, bytes_before::text AS before FROM traffic_resets
        WHERE user_id = ANY($1::uuid[]) ORDER BY period_start`,
      [users.map((u) => u.user.id)],
    )) as { user_id: string; period_start: Date; before: string }[];

  const run = () => t.app.get(TrafficResetService).run();

  it('the rule in TypeScript and in SQL agree', async () => {
    const kinds: TrafficReset[] = ['none', 'day', 'week', 'month', 'rolling_month'];
    const cases = Array.from({ length: 3000 }, (_, i) => {
      // Moments around midnights and month ends over three years, some exactly on a boundary.
      const base = Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1100) * DAY;
      const after = new Date(i % 5 === 0 ? base : base + Math.floor(Math.random() * DAY));
      const anchor = i % 7 === 0 ? null : new Date(after.getTime() - Math.random() * 400 * DAY);
      return { kind: kinds[i % kinds.length], day: 1 + (i % 28), anchor, after };
    });
    const rows = (await t.dataSource.query(
      `SELECT ${nextResetSql('k', 'd', 'a', 'x')} AS next, ${atMidnightSql('x')} AS "atMidnight"
         FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::timestamptz[])
              WITH ORDINALITY AS c(k, d, a, x, o) ORDER BY o`,
      [
        cases.map((c) => c.kind),
        cases.map((c) => c.day),
        cases.map((c) => c.anchor),
        cases.map((c) => c.after),
      ],
    )) as { next: Date | null; atMidnight: boolean }[];
    const mismatches = cases.filter((c, i) => {
      const ts = nextResetAfter(c.kind, c.day, c.anchor, c.after);
      return (ts?.getTime() ?? null) !== (rows[i].next?.getTime() ?? null);
    });
    expect(mismatches).toEqual([]);
    // Which moments are a midnight (the reset job reads those resets from `users`, the others
    // through `next_traffic_resets`): some of the cases are, most are not.
    const atMidnight = cases.map(
      (c) => midnightAtOrBefore(c.after).getTime() === c.after.getTime(),
    );
    expect(rows.map((row) => row.atMidnight)).toEqual(atMidnight);
    expect(atMidnight.filter(Boolean).length).toBeGreaterThan(500);
    expect(nextResetAfter('week', 1, null, new Date('2026-11-30T00:00:00Z'))).toEqual(
      new Date('2026-12-07T00:00:00Z'),
    );
    expect(nextResetAfter('month', 15, null, new Date('2026-12-14T23:59:59Z'))).toEqual(
      new Date('2026-12-15T00:00:00Z'),
    );
  });

  it('a month plan with reset_day 15 resets on the 15th at 00:00 UTC once, through a restart halfway and with two instances', async () => {
    const plan = await savePlan('monthly15', { traffic_reset: 'month', reset_day: 15 }).expect(200);
    expect(plan.body).toMatchObject({
      traffic_reset: 'month',
      reset_day: 15,
      starts: 'on_purchase',
    });
    const users = await overLimitSubscribers('monthly15', 12);
    const now = new Date();
    const due = new Date(
      Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + (now.getUTCDate() >= 15 ? 1 : 0), 15),
    );
    expect((await me(users[0])).traffic.resets_at).toBe(due.toISOString());
    expect((await limits(users)).every((u) => u.traffic_used_bytes >= u.traffic_limit_bytes)).toBe(
      true,
    );

    clockAt(new Date(due.getTime() - 1000));
    expect((await run()).reset).toBe(0);

    clockAt(new Date(due.getTime() + 30_000));
    // One batch of a run that then stopped (a restart), then both instances at once.
    const first = await t.app
      .get(UserTrafficRepository)
      .resetDue(new Date(due.getTime() + 30_000), 5, t.settings.trafficLimitDefaultBytes);
    expect(first).toEqual({ picked: 5, reset: 5 });
    // Batches of 2: the sweep goes through several id ranges.
    const both = await Promise.all([
      t.app.get(TrafficResetService).run(undefined, 2),
      t2.app.get(TrafficResetService).run(undefined, 2),
    ]);
    expect(both.reduce((sum, r) => sum + r.reset, 0)).toBe(7);
    expect(Math.max(...both.map((r) => r.batches))).toBeGreaterThanOrEqual(4);
    expect((await run()).reset).toBe(0);

    const resets = await resetsOf(users);
    expect(resets).toHaveLength(12);
    expect(new Set(resets.map((r) => r.user_id)).size).toBe(12);
    expect(resets.every((r) => r.before === '1500000')).toBe(true);
    expect(resets.every((r) => r.period_start.getTime() === due.getTime())).toBe(true);
    // The agents read limits: the users may use their traffic again.
    expect((await limits(users)).every((u) => u.traffic_used_bytes === 0)).toBe(true);
    const nextDue = new Date(Date.UTC(due.getUTCFullYear(), due.getUTCMonth() + 1, 15));
    expect((await me(users[3])).traffic.resets_at).toBe(nextDue.toISOString());
    // ...and the nodes' credential sets take them back: one change per reset user, recorded by
    // the batch itself, not a second time by the users row trigger (migration 0024).
    const changes = async () =>
      (
        (await t.dataSource.query(
          `SELECT count(*)::int AS n, count(DISTINCT user_id)::int AS users
             FROM credential_changes WHERE user_id = ANY($1::uuid[])`,
          [users.map((u) => u.user.id)],
        )) as { n: number; users: number }[]
      )[0];
    const before = await changes();
    await t.dataSource.query(`UPDATE users SET traffic_used_bytes = 7 WHERE id = $1`, [
      users[0].user.id,
    ]);
    expect((await changes()).n).toBe(before.n);
    // A decrease by any other statement is still the trigger's, also after a reset batch in the
    // same transaction (rolled back: the months below count on these users as they are).
    const runner = t.dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      const [batch] = await runner.query(resetDueSql('id-range'), [
        new Date(Date.UTC(2100, 0, 1)),
        1,
        t.settings.trafficLimitDefaultBytes.toString(),
        WHOLE_UUID_RANGE.after,
        WHOLE_UUID_RANGE.upTo,
      ]);
      // Far ahead: the user it takes has its subscription ended, so it is cleared, not reset.
      expect(batch).toMatchObject({ picked: 1, reset: 0 });
      await runner.query(`UPDATE users SET traffic_used_bytes = 0 WHERE id = $1`, [
        users[0].user.id,
      ]);
      const [inside] = await runner.query(
        `SELECT count(*)::int AS n FROM credential_changes WHERE user_id = ANY($1::uuid[])`,
        [users.map((u) => u.user.id)],
      );
      expect(inside.n).toBe(before.n + 1);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect(before.users).toBe(12);

    // The next month's 15th is the next period: one more reset each, then none.
    clockAt(new Date(nextDue.getTime() + 1000));
    expect((await run()).reset).toBe(12);
    expect((await run()).reset).toBe(0);
    expect(await resetsOf(users)).toHaveLength(24);
  });

  it('week resets on Monday at 00:00 UTC, day at each midnight, each once', async () => {
    await savePlan('weekly-reset', { traffic_reset: 'week' }).expect(200);
    await savePlan('daily-reset', { traffic_reset: 'day' }).expect(200);
    const weekly = await overLimitSubscribers('weekly-reset', 3);
    const daily = await overLimitSubscribers('daily-reset', 3);
    // A daily subscriber under its limit: its reset changes nothing the nodes hold.
    const [under] = await overLimitSubscribers('daily-reset', 1);
    await t.dataSource.query(`UPDATE users SET traffic_used_bytes = 10 WHERE id = $1`, [
      under.user.id,
    ]);
    const changesOf = async (users: TestUser[]) =>
      (
        (await t.dataSource.query(
          `SELECT count(*)::int AS n FROM credential_changes WHERE user_id = ANY($1::uuid[])`,
          [users.map((u) => u.user.id)],
        )) as { n: number }[]
      )[0].n;
    const changesBefore = { over: await changesOf(daily), under: await changesOf([under]) };
    const monday = nextResetAfter('week', 1, null, new Date())!;
    const midnight = nextResetAfter('day', 1, null, new Date())!;
    expect(monday.getUTCDay()).toBe(1);
    expect((await me(weekly[0])).traffic.resets_at).toBe(monday.toISOString());
    expect((await me(daily[0])).traffic.resets_at).toBe(midnight.toISOString());

    clockAt(new Date(midnight.getTime() - 1));
    expect((await run()).reset).toBe(0);
    clockAt(new Date(midnight.getTime() + 1000));
    await Promise.all([
      t.app.get(TrafficResetService).run(),
      t2.app.get(TrafficResetService).run(),
    ]);
    expect(await resetsOf(daily)).toHaveLength(3);
    expect(await resetsOf([under])).toHaveLength(1);
    expect({ over: await changesOf(daily), under: await changesOf([under]) }).toEqual({
      over: changesBefore.over + 3,
      under: changesBefore.under,
    });
    const weeklyDone = midnight.getTime() === monday.getTime() ? 3 : 0;
    expect(await resetsOf(weekly)).toHaveLength(weeklyDone);

    clockAt(new Date(monday.getTime() + 1000));
    await run();
    await run();
    expect(await resetsOf(weekly)).toHaveLength(3);
    expect((await limits(weekly)).every((u) => u.traffic_used_bytes === 0)).toBe(true);
    // A late run resets daily users once, for the latest midnight it finds due.
    const days = Math.round((monday.getTime() - midnight.getTime()) / DAY) + 1;
    expect(await resetsOf(daily)).toHaveLength(3 * Math.min(days, 2));
  });

  it('a user over the limit before the reset is admitted again after it (the agent asks validate)', async () => {
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [nodeId],
    );
    await savePlan('daily-admit', { traffic_reset: 'day' }).expect(200);
    const [user] = await overLimitSubscribers('daily-admit', 1);
    const admission = async () => {
      const routing = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
      const [entry] = routing.body as { node_id: string; session_token: string }[];
      const answer = await t
        .http()
        .post('/api/v1/internal/validate')
        .set('X-Internal-Secret', t.settings.internalSecret)
        .send({ token: entry.session_token, node_id: entry.node_id })
        .expect(200);
      return answer.body as { valid: boolean; reason?: string };
    };
    expect(await admission()).toEqual({ valid: false, reason: 'traffic_exceeded' });
    const midnight = nextResetAfter('day', 1, null, new Date())!;
    // The night's second read of `users`: the test before may have left the job's first read of
    // that night behind it (on a Sunday its Monday is this midnight).
    clockAt(new Date(midnight.getTime() + SWEEP_SETTLE_MS));
    await run();
    expect(await admission()).toMatchObject({ valid: true, traffic_used_bytes: 0 });
  });

  it('a subscription that ended is not reset, and leaves the job', async () => {
    await savePlan('daily-short', { traffic_reset: 'day', duration_days: 1 }).expect(200);
    const [user] = await overLimitSubscribers('daily-short', 1);
    clockAt(new Date(Date.now() + 3 * DAY));
    await run();
    expect(await resetsOf([user])).toHaveLength(0);
    const [row] = (await t.dataSource.query(
      `SELECT traffic_reset_at, traffic_used_bytes::int AS used FROM users WHERE id = $1`,
      [user.user.id],
    )) as { traffic_reset_at: Date | null; used: number }[];
    expect(row).toEqual({ traffic_reset_at: null, used: 1_500_000 });
  });

  it('on_first_use: the days begin with the first counted traffic, not the purchase', async () => {
    await savePlan('on-first-use', {
      duration_days: 30,
      starts: 'on_first_use',
      on_hold_max_days: 10,
    }).expect(200);
    const user = await newUser(t);
    await t.app.get(SubscriptionsRepository).extendForPlan(user.user.id, 'on-first-use');
    const waiting = (await me(user)).subscription;
    expect(waiting).toMatchObject({ active: false, starts_at: null, waiting_first_use: true });
    expect(Date.parse(waiting.expires_at) - Date.now()).toBeGreaterThan(39.9 * DAY);
    // The nodes admit it meanwhile, so that it can connect at all.
    const [standing] = (
      await t
        .http()
        .get(`/api/v1/internal/limits?user_ids=${user.user.id}`)
        .set('X-Internal-Secret', t.settings.internalSecret)
        .expect(200)
    ).body as { active: boolean }[];
    expect(standing.active).toBe(true);

    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = Date.now();
    await t
      .http()
      .post('/api/v1/internal/traffic')
      .set('X-Internal-Secret', t.settings.internalSecret)
      .send({
        node_id: nodeId,
        report_id: randomUUID(),
        entries: [{ user_id: user.user.id, bytes_up: 10, bytes_down: 10 }],
      })
      .expect(200);
    const started = (await me(user)).subscription;
    expect(started).toMatchObject({ active: true, waiting_first_use: false });
    expect(Date.parse(started.starts_at!)).toBeGreaterThanOrEqual(before - 1000);
    const days = (Date.parse(started.expires_at) - Date.parse(started.starts_at!)) / DAY;
    expect(days).toBeCloseTo(30, 3);
    // A second report moves nothing.
    await t
      .http()
      .post('/api/v1/internal/traffic')
      .set('X-Internal-Secret', t.settings.internalSecret)
      .send({
        node_id: nodeId,
        report_id: randomUUID(),
        entries: [{ user_id: user.user.id, bytes_up: 10, bytes_down: 10 }],
      })
      .expect(200);
    expect((await me(user)).subscription.expires_at).toBe(started.expires_at);
  });

  it('a staff grant may start on first use too', async () => {
    const user = await newUser(t);
    const moderator = await newUser(t, 'moderator');
    const granted = await t
      .http()
      .post(`/api/v1/admin/users/${user.user.id}/subscription`)
      .set(moderator.bearer)
      .send({ days: 10, reason: 'support', starts: 'on_first_use', on_hold_max_days: 5 })
      .expect(200);
    expect(granted.body.subscription).toMatchObject({
      plan_name: 'manual',
      active: false,
      starts_at: null,
      waiting_first_use: true,
    });
    const hold = Date.parse(granted.body.subscription.expires_at) - Date.now();
    expect(hold / DAY).toBeCloseTo(15, 2);
    // A second grant while it waits lengthens it and keeps it waiting.
    const again = await t
      .http()
      .post(`/api/v1/admin/users/${user.user.id}/subscription`)
      .set(moderator.bearer)
      .send({ days: 2, reason: 'support' })
      .expect(200);
    expect(again.body.subscription).toMatchObject({ waiting_first_use: true });
    await t
      .http()
      .post('/api/v1/internal/traffic')
      .set('X-Internal-Secret', t.settings.internalSecret)
      .send({
        node_id: nodeId,
        report_id: randomUUID(),
        entries: [{ user_id: user.user.id, bytes_up: 1, bytes_down: 1 }],
      })
      .expect(200);
    const started = (await me(user)).subscription;
    expect(started).toMatchObject({ active: true, waiting_first_use: false });
    const days = (Date.parse(started.expires_at) - Date.parse(started.starts_at!)) / DAY;
    expect(days).toBeCloseTo(12, 3);
  });

  it('between midnights the job reads only the next resets not at a midnight: a rolling month is reset then, a midnight reset at the next midnight', async () => {
    await savePlan('rolling', { traffic_reset: 'rolling_month' }).expect(200);
    await savePlan('daily-late', { traffic_reset: 'day' }).expect(200);
    const [rolling] = await overLimitSubscribers('rolling', 1);
    const late = await overLimitSubscribers('daily-late', 3);
    const day = new Date(midnightAtOrBefore(new Date()).getTime() + 40 * DAY);
    // The rolling month's reset falls at noon of that day.
    const noon = new Date(day.getTime() + DAY / 2);
    await t.dataSource.query(
      `UPDATE users SET subscription_started_at = $2, traffic_reset_at = $3 WHERE id = $1`,
      [rolling.user.id, new Date(noon.getTime() - 30 * DAY), noon],
    );
    /** How many of `users`' resets opened the period that began at `at`. */
    const resetsAt = async (users: TestUser[], at: Date) =>
      (await resetsOf(users)).filter((r) => r.period_start.getTime() === at.getTime()).length;
    const minutes = (m: number) => new Date(day.getTime() + m * 60_000);
    /**
     * Sets one of `late` back to `at`, a midnight that passed, as a transaction that commits late
     * would (one whose reset the job already took for that midnight could not be told apart).
     */
    const setLate = (user: TestUser, at: Date) =>
      t.dataSource.query(`UPDATE users SET traffic_reset_at = $2 WHERE id = $1`, [
        user.user.id,
        at,
      ]);

    // A minute after that midnight, a run reads `users` (every user due by then is reset); the
    // next finds nobody due at a midnight and records it, while a rolling month that fell due
    // between them is reset through `next_traffic_resets` (as in every minute of a large fleet).
    const [early] = await overLimitSubscribers('rolling', 1);
    await t.dataSource.query(
      `UPDATE users SET subscription_started_at = $2, traffic_reset_at = $3 WHERE id = $1`,
      [early.user.id, new Date(minutes(1.5).getTime() - 30 * DAY), minutes(1.5)],
    );
    clockAt(minutes(1));
    await run();
    clockAt(minutes(2));
    expect(await run()).toEqual({ ran: true, reset: 1, batches: 1 });
    expect(await t.app.get(UserTrafficRepository).sweptUntil()).toEqual(minutes(2));
    expect(await resetsAt([early], minutes(1.5))).toBe(1);
    // Once SWEEP_SETTLE_MS after the midnight has passed it reads `users` once more, the night's
    // last.
    clockAt(minutes(10));
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    expect(await t.app.get(UserTrafficRepository).sweptUntil()).toEqual(minutes(10));

    // A reset at that midnight appearing afterwards is not read before the next midnight; the
    // rolling month at noon is, through `next_traffic_resets`.
    await setLate(late[0], day);
    clockAt(new Date(noon.getTime() + 1000));
    expect(await run()).toEqual({ ran: true, reset: 1, batches: 1 });
    expect(await resetsOf([rolling])).toEqual([
      { user_id: rolling.user.id, period_start: noon, before: '1500000' },
    ]);
    expect(await resetsAt([late[0]], day)).toBe(0);
    expect((await me(rolling)).traffic.resets_at).toBe(
      new Date(noon.getTime() + 30 * DAY).toISOString(),
    );

    // After the next midnight it is read; then not until SWEEP_SETTLE_MS after it, and once more
    // then.
    const next = new Date(day.getTime() + DAY);
    const after = (m: number) => new Date(next.getTime() + m * 60_000);
    const settled = SWEEP_SETTLE_MS / 60_000;
    clockAt(after(1));
    await run();
    expect(await resetsAt([late[0]], day)).toBe(1);
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    await setLate(late[1], day);
    clockAt(after(settled - 1));
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    clockAt(after(settled));
    expect((await run()).reset).toBe(1);
    expect(await resetsAt([late[1]], day)).toBe(1);
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    await setLate(late[2], day);
    clockAt(after(settled + 1));
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    expect(await resetsAt([late[2]], day)).toBe(0);
  });

  it("rows of next_traffic_resets left behind or missing (an older version's resets) neither hold up the job nor lose a reset", async () => {
    await savePlan('rolling-drift', { traffic_reset: 'rolling_month' }).expect(200);
    const [behind, missing] = await overLimitSubscribers('rolling-drift', 2);
    const day = new Date(midnightAtOrBefore(new Date()).getTime() + 50 * DAY);
    const at = (hours: number) => new Date(day.getTime() + hours * 3_600_000);
    // `missing`'s reset falls two minutes after the next midnight, when every reset at that
    // midnight is done: only a count of every due user finds it then.
    const nextResets = { [behind.user.id]: at(6), [missing.user.id]: at(24 + 2 / 60) };
    for (const [id, next] of Object.entries(nextResets)) {
      await t.dataSource.query(
        `UPDATE users SET subscription_started_at = $2, traffic_reset_at = $3 WHERE id = $1`,
        [id, new Date(next.getTime() - 30 * DAY), next],
      );
    }
    const repository = t.app.get(UserTrafficRepository);
    clockAt(at(1 / 6));
    await run();
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    // As an instance of the version before 0027 leaves them: one row behind its user's reset,
    // one gone.
    await t.dataSource.query(`UPDATE next_traffic_resets SET reset_at = $2 WHERE user_id = $1`, [
      behind.user.id,
      at(1),
    ]);
    await t.dataSource.query(`DELETE FROM next_traffic_resets WHERE user_id = $1`, [
      missing.user.id,
    ]);

    // The row behind is not counted, so it sends the job to no batch, let alone a sweep.
    clockAt(at(2));
    expect(await repository.countResetsDue(at(2), 'next-resets')).toEqual({ n: 0 });
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    // At its user's reset it is found, and written again.
    clockAt(new Date(at(6).getTime() + 1000));
    expect(await run()).toEqual({ ran: true, reset: 1, batches: 1 });
    expect(await resetsOf([behind])).toHaveLength(1);
    // The user without a row is reset by the night's second count of `users`.
    clockAt(at(24 + 1 / 60));
    await run();
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    clockAt(at(24 + 3 / 60));
    expect(await run()).toEqual({ ran: true, reset: 0, batches: 0 });
    expect(await resetsOf([missing])).toEqual([]);
    clockAt(new Date(at(24).getTime() + SWEEP_SETTLE_MS));
    expect(await run()).toEqual({ ran: true, reset: 1, batches: 1 });
    expect(await resetsOf([missing])).toEqual([
      { user_id: missing.user.id, period_start: at(24 + 2 / 60), before: '1500000' },
    ]);
  });

  it('plan fields: validated, and omitted keeps the plan its own', async () => {
    await savePlan('kept', {
      traffic_reset: 'month',
      reset_day: 28,
      starts: 'on_first_use',
    }).expect(200);
    const again = await savePlan('kept', {}).expect(200);
    expect(again.body).toMatchObject({
      traffic_reset: 'month',
      reset_day: 28,
      starts: 'on_first_use',
      on_hold_max_days: 30,
    });
    for (const bad of [
      { traffic_reset: 'year' },
      { reset_day: 29 },
      { reset_day: 0 },
      { starts: 'later' },
      { on_hold_max_days: 366 },
    ]) {
      const response = await savePlan('kept', bad).expect(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
    }
  });
});
