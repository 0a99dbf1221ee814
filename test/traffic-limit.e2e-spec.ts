import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { Uuid } from '../src/common/uuid';
import { AppSettingsRepository } from '../src/settings-store/app-settings.repository';
import type { User } from '../src/users/entities/user.entity';
import { isOverLimit, trafficLimitOf } from '../src/users/traffic-limit';
import { UserTrafficRepository } from '../src/users/user-traffic.repository';
import { UsersService } from '../src/users/users.service';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, savePlan } from './harness/factories';

const DAY = 86_400_000;
const PLAN_BYTES = 3_000;
const OVERRIDE_BYTES = 5_000;
const FALLBACK_BYTES = 7_000;
const STORED_BYTES = 9_000;

/**
 * The traffic-limit rule has a TypeScript form (one user read into memory: `/users/me`, staff
 * views) and an SQL form (the proxy's standings, the counters' over-limit answer). Both run here
 * on the same users and must agree, with the default from the setting and from the stored value.
 */
describe('the traffic-limit rule in TypeScript and in SQL', () => {
  let t: TestApp;
  /** Each user, with the limit that applies to it (-1: the default). */
  const cases: { name: string; user: User; limit: number }[] = [];

  beforeAll(async () => {
    t = await startTestApp({ TRAFFIC_LIMIT_DEFAULT_BYTES: String(FALLBACK_BYTES) });
    const owner = await newUser(t, 'owner');
    await savePlan(t, owner, { traffic_limit_bytes: PLAN_BYTES });
    const running = new Date(Date.now() + 10 * DAY);
    const expired = new Date(Date.now() - DAY);
    const make = async (
      name: string,
      fields: Partial<User>,
      limit: number | 'default',
      used: number,
    ): Promise<void> => {
      const { user } = await newUser(t, 'seed', { ...fields, trafficUsedBytes: String(used) });
      cases.push({ name, user, limit: limit === 'default' ? -1 : limit });
    };
    const plan = { planName: 'monthly', subscriptionExpiresAt: running };
    await make(
      'override over a running plan',
      { ...plan, trafficLimitBytes: String(OVERRIDE_BYTES) },
      OVERRIDE_BYTES,
      10,
    );
    await make(
      'override without a plan',
      { trafficLimitBytes: String(OVERRIDE_BYTES) },
      OVERRIDE_BYTES,
      OVERRIDE_BYTES,
    );
    await make('running plan', plan, PLAN_BYTES, 10);
    await make('running plan, at the limit', plan, PLAN_BYTES, PLAN_BYTES);
    await make('running plan, one byte under', plan, PLAN_BYTES, PLAN_BYTES - 1);
    await make(
      'expired plan',
      { planName: 'monthly', subscriptionExpiresAt: expired },
      'default',
      10,
    );
    await make(
      'trial (no plan row)',
      { planName: 'trial', subscriptionExpiresAt: running },
      'default',
      0,
    );
    await make('no subscription', {}, 'default', 0);
    await make('no subscription, past the default', {}, 'default', STORED_BYTES + 1);
  });
  afterAll(() => t.close());

  /** Each case's limit and whether it is over, by the TypeScript rule on the service's view. */
  async function byTypeScript(): Promise<{ limit: string; over: boolean }[]> {
    const users = t.app.get(UsersService);
    return Promise.all(
      cases.map(async ({ user }) => {
        const view = await users.view(user.id);
        const limit = trafficLimitOf(view.user, view.limits);
        return { limit: limit.toString(), over: isOverLimit(view.user.trafficUsedBytes, limit) };
      }),
    );
  }

  /** The same by the SQL rule: the proxy's standings and the counters' statement (adding 0). */
  async function bySql(): Promise<{ limit: string; over: boolean }[]> {
    const traffic = t.app.get(UserTrafficRepository);
    const ids = cases.map(({ user }) => user.id);
    const standings = await traffic.trafficStandings(ids, BigInt(FALLBACK_BYTES));
    const txHost = t.app.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    const added = await txHost.withTransaction(() =>
      traffic.addTraffic(
        { ids: ids.map((id) => id as Uuid), bytes: ids.map(() => 0) },
        BigInt(FALLBACK_BYTES),
      ),
    );
    const over = new Set(added.overLimit);
    return ids.map((id) => ({
      limit: standings.find((standing) => standing.id === id)!.limitBytes,
      over: over.has(id),
    }));
  }

  const expected = (defaultBytes: number): { name: string; limit: string; over: boolean }[] =>
    cases.map(({ name, user, limit }) => {
      const bytes = limit === -1 ? defaultBytes : limit;
      return { name, limit: String(bytes), over: Number(user.trafficUsedBytes) >= bytes };
    });

  const named = (rows: { limit: string; over: boolean }[]) =>
    rows.map((row, i) => ({ name: cases[i].name, ...row }));

  it('with the default from TRAFFIC_LIMIT_DEFAULT_BYTES, both give the same limits', async () => {
    expect(named(await byTypeScript())).toEqual(expected(FALLBACK_BYTES));
    expect(named(await bySql())).toEqual(expected(FALLBACK_BYTES));
  });

  it('with a stored default, both give the same limits', async () => {
    await t.app.get(AppSettingsRepository).setDefaultTrafficLimit(String(STORED_BYTES));
    expect(named(await byTypeScript())).toEqual(expected(STORED_BYTES));
    expect(named(await bySql())).toEqual(expected(STORED_BYTES));
  });
});
