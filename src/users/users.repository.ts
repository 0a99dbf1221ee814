import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource, type Repository } from 'typeorm';
import { isUniqueViolation } from '../database/postgres-errors';
import { bigintArray, preparedRows, sqlRows, uuidArray } from '../database/sql';
import { sortedUuids, type Uuid } from '../common/uuid';
import { DEFAULT_TRAFFIC_LIMIT_KEY } from '../settings-store/app-settings.repository';
import { type Role, User } from './entities/user.entity';
import { NoUserCondition, PartnerCodeTakenCondition, UsernameTakenCondition } from './users.errors';

export interface NewStaff {
  username: string;
  passwordHash: string;
  role: Role;
  commissionPercent?: string | null;
  partnerCode?: string | null;
}

/** The session and user an access token names. */
export interface SessionKey {
  sessionId: string;
  userId: string;
}

/** A user with the limits that apply to it when it has no override of its own. */
export interface UserWithDefaults {
  user: User;
  /** The stored default limit; null when none is stored. */
  defaultLimitBytes: string | null;
  /** The limit of the plan named by `plan_name`; null when it names no plan row (the trial). */
  planLimitBytes: string | null;
}

/** A user's traffic as the proxy sees it: the limit that applies now, the use, the subscription. */
export interface TrafficStanding {
  id: string;
  limitBytes: string;
  usedBytes: string;
  subscriptionExpiresAt: Date | null;
  active: boolean;
}

/** What adding traffic did: how many of the users exist, and which are now at or over their limit. */
export interface TrafficAdded {
  /** Users at or over their limit after the addition. */
  overLimit: string[];
  /** Ids given that name no user (nothing was added for them). */
  missing: string[];
}

/** The stored default limit, else `$fallback` (TRAFFIC_LIMIT_DEFAULT_BYTES): one row `d.bytes`. */
const DEFAULT_LIMIT = (fallback: string): string =>
  `(SELECT COALESCE((SELECT (s.value #>> '{}')::bigint FROM app_settings s
     WHERE s.key = '${DEFAULT_TRAFFIC_LIMIT_KEY}'), ${fallback}::bigint) AS bytes) d`;

/**
 * The limit that applies to user `u` now, given its plan `p` (left-joined) and the default `d`: its
 * override, else the plan's limit while a subscription runs, else the default. The same rule as
 * `trafficLimitOf`.
 */
const EFFECTIVE_LIMIT = `COALESCE(u.traffic_limit_bytes,
  CASE WHEN u.subscription_expires_at > now() THEN p.traffic_limit_bytes END, d.bytes)`;

/**
 * The `TrafficStanding` rows of the users whose ids are in the uuid[] parameter `ids`, `fallback`
 * the parameter holding the default limit in bytes. For statements that read standings along with
 * other work (the proxy's token validation).
 */
export const trafficStandingsSql = (ids: string, fallback: string): string =>
  `SELECT u.id, ${EFFECTIVE_LIMIT}::text AS "limitBytes",
          u.traffic_used_bytes::text AS "usedBytes",
          u.subscription_expires_at AS "subscriptionExpiresAt",
          COALESCE(u.subscription_expires_at > now(), false) AS active
     FROM users u LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${DEFAULT_LIMIT(fallback)}
    WHERE u.id = ANY(${ids}::uuid[])`;

/** A partner as a buyer attaching to it sees it. */
export interface PartnerRef {
  id: string;
  partnerCode: string;
}

/** A subscription, kept in the user's own columns. */
export interface SubscriptionRecord {
  planName: string;
  expiresAt: Date;
}

/** Who gets something when this buyer pays. */
export interface BuyerLinks {
  referrerId: string | null;
  partnerId: string | null;
  /** The partner's commission rate (numeric(5,2) text); null when it has none. */
  partnerPercent: string | null;
}

/**
 * A user row (`u`, its `columns`) with its fallback limits; `$2` is the default limit's settings
 * key. The columns are named rather than `u.*`: a named prepared statement whose result gains a
 * column (a migration run by a newer instance) fails on every connection that prepared it.
 */
const withDefaults = (columns: string): string =>
  `${columns}, (SELECT s.value #>> '{}' FROM app_settings s WHERE s.key = $2) AS default_limit,
  (SELECT p.traffic_limit_bytes::text FROM plans p WHERE p.name = u.plan_name) AS plan_limit`;

/**
 * For the rest of the transaction, joins are nested loops or merge joins and tables are read
 * through an index: an UPDATE over a sorted array then visits, and locks, rows in id order (see
 * `addTraffic`). A nested loop is driven by the array, in its order; a merge join reads the
 * primary key's index and the array sorted, both by id. The planner picks the cheaper: a nested
 * loop for a few users of a large table, a merge join when a report names a large share of them.
 * Without the scan settings, statistics that call the table tiny (analyzed when it held one row)
 * let the planner scan the table itself first, in its physical order.
 */
export const ORDERED_JOINS = `SELECT set_config('enable_hashjoin', 'off', true),
                                     set_config('enable_seqscan', 'off', true),
                                     set_config('enable_bitmapscan', 'off', true)`;

/** The largest value of a bigint column: a traffic counter stops there. */
export const BIGINT_MAX = 9223372036854775807n;

/**
 * Adds `$2` (bigint[], each at most BIGINT_MAX) bytes to the counters of the users `$1` (uuid[]),
 * saturating at BIGINT_MAX; `$3` is the default limit. How many users it updated, and which are
 * now at or over their limit. In bigint arithmetic: the counter is never negative (a CHECK), so
 * `max − used` cannot overflow, and numeric arithmetic made the statement about a sixth slower.
 */
export const ADD_TRAFFIC_SQL = `WITH added AS (
    UPDATE users u
       SET traffic_used_bytes = CASE WHEN v.bytes > ${BIGINT_MAX} - u.traffic_used_bytes
                                     THEN ${BIGINT_MAX}
                                     ELSE u.traffic_used_bytes + v.bytes END
      FROM unnest($1::uuid[], $2::bigint[]) AS v(id, bytes)
     WHERE u.id = v.id
    RETURNING u.id, u.traffic_used_bytes, u.traffic_limit_bytes, u.plan_name,
              u.subscription_expires_at
  )
  SELECT count(*)::int AS updated,
         COALESCE(array_agg(u.id) FILTER (WHERE u.traffic_used_bytes >= ${EFFECTIVE_LIMIT}),
                  '{}') AS "overLimit"
    FROM added u LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${DEFAULT_LIMIT('$3')}`;

/** `expires_at` moved on by some days from whichever is later: now, or the current expiry. */
const extended = (days: string): string =>
  `GREATEST(now(), COALESCE(subscription_expires_at, now())) + make_interval(days => ${days})`;

/** Bytes to add, capped at BIGINT_MAX: a counter given that many is full either way. */
const atMostBigintMax = (bytes: number | bigint): number | bigint =>
  typeof bytes === 'bigint' && bytes > BIGINT_MAX ? BIGINT_MAX : bytes;

/**
 * The owner of `users`: every write and lock of a user row is here (accounts, staff, node access,
 * limits, subscriptions, the trial). Statements run in the caller's transaction, when there is one.
 */
@Injectable()
export class UsersRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly dataSource: DataSource,
  ) {}

  /** The entity's columns of `u` and its fallback limits, made once. */
  private get withDefaultsSql(): string {
    this.userColumns ??= withDefaults(
      this.dataSource
        .getMetadata(User)
        .columns.map((column) => `u."${column.databaseName}"`)
        .join(', '),
    );
    return this.userColumns;
  }

  private userColumns?: string;

  private get users(): Repository<User> {
    return this.txHost.tx.getRepository(User);
  }

  async getById(id: string): Promise<User> {
    const user = await this.users.findOneBy({ id });
    if (!user) throw new NoUserCondition(id);
    return user;
  }

  /**
   * The user, the stored default traffic limit and its plan's limit, in one round trip. Plain SQL
   * mapped through the entity's own column metadata: this is the hottest read of the service
   * (`GET /users/me`), and the query builder's hydration cost more than the query itself.
   */
  async getWithDefaults(id: string): Promise<UserWithDefaults> {
    const rows = await preparedRows<Record<string, unknown>>(
      this.txHost.tx,
      'users_with_defaults',
      `SELECT ${this.withDefaultsSql} FROM users u WHERE u.id = $1`,
      [id, DEFAULT_TRAFFIC_LIMIT_KEY],
    );
    if (!rows[0]) throw new NoUserCondition(id);
    return this.withDefaults(rows[0]);
  }

  /**
   * For each access token's session and user: what `getWithDefaults` gives for the user while that
   * refresh session is the user's and not revoked; null otherwise. One statement for all of them,
   * outside any transaction: authentication runs it for every signed-in request (concurrent
   * requests share one, see `JwtStrategy`), so revocation takes effect at once and the route has
   * its caller loaded. Ids must be lower-case UUIDs.
   */
  async findBySessions(keys: SessionKey[]): Promise<(UserWithDefaults | null)[]> {
    const rows = await preparedRows<Record<string, unknown>>(
      this.dataSource,
      'users_by_sessions',
      `SELECT r.id AS refresh_session_id, ${this.withDefaultsSql}
         FROM refresh_sessions r JOIN users u ON u.id = r.user_id
        WHERE r.id = ANY($1::uuid[]) AND r.revoked_at IS NULL`,
      [[...new Set(keys.map((key) => key.sessionId))], DEFAULT_TRAFFIC_LIMIT_KEY],
    );
    const bySession = new Map(rows.map((row) => [row.refresh_session_id as string, row]));
    return keys.map(({ sessionId, userId }) => {
      const row = bySession.get(sessionId);
      return row?.id === userId ? this.withDefaults(row) : null;
    });
  }

  private withDefaults(row: Record<string, unknown>): UserWithDefaults {
    return {
      user: this.fromRow(row),
      defaultLimitBytes: (row.default_limit as string | null) ?? null,
      planLimitBytes: (row.plan_limit as string | null) ?? null,
    };
  }

  /** Each named plan's traffic limit in bytes (digits), for views of many users at once. */
  async planLimits(planNames: string[]): Promise<Map<string, string>> {
    if (planNames.length === 0) return new Map();
    const rows = await sqlRows<{ name: string; bytes: string }>(
      this.txHost.tx,
      `SELECT p.name, p.traffic_limit_bytes::text AS bytes FROM plans p WHERE p.name = ANY($1)`,
      [[...new Set(planNames)]],
    );
    return new Map(rows.map((row) => [row.name, row.bytes]));
  }

  private fromRow(row: Record<string, unknown>): User {
    const user = this.users.create();
    for (const column of this.users.metadata.columns) {
      Object.assign(user, { [column.propertyName]: row[column.databaseName] });
    }
    return user;
  }

  findBySeedHash(seedHash: string): Promise<User | null> {
    return this.users.findOneBy({ seedHash });
  }

  findByUsername(username: string): Promise<User | null> {
    return this.users.findOneBy({ username });
  }

  findById(id: string): Promise<User | null> {
    return this.users.findOneBy({ id });
  }

  findByTgId(tgId: number | string): Promise<User | null> {
    return this.users.findOneBy({ tgId: String(tgId) });
  }

  createSeedUser(seedHash: string): Promise<User> {
    return this.users.save(this.users.create({ seedHash }));
  }

  /** Creates the Telegram account on first contact; keeps its Telegram username current. */
  async upsertTelegramUser(tgId: number, tgUsername: string | null): Promise<User> {
    await this.users.query(
      `INSERT INTO users (tg_id, tg_username) VALUES ($1, $2)
       ON CONFLICT (tg_id) WHERE tg_id IS NOT NULL
       DO UPDATE SET tg_username = COALESCE(EXCLUDED.tg_username, users.tg_username)`,
      [String(tgId), tgUsername],
    );
    return (await this.findByTgId(tgId)) as User;
  }

  async createStaff(staff: NewStaff): Promise<User> {
    const repo = this.users;
    try {
      return await repo.save(
        repo.create({
          username: staff.username,
          passwordHash: staff.passwordHash,
          role: staff.role,
          commissionPercent: staff.commissionPercent ?? null,
          partnerCode: staff.partnerCode ?? null,
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_users_username'))
        throw new UsernameTakenCondition(staff.username);
      if (isUniqueViolation(error, 'UQ_users_partner_code'))
        throw new PartnerCodeTakenCondition(staff.partnerCode ?? null);
      throw error;
    }
  }

  async updatePasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.users.update({ id }, { passwordHash });
  }

  /**
   * Locks these users' rows until the transaction ends, always in id order so that two writers
   * locking the same pair cannot deadlock. NO KEY UPDATE still lets other tables' foreign keys
   * reference the rows meanwhile. The ids of the users that exist.
   */
  async lock(ids: string[]): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `SELECT id FROM users WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [ids],
    );
    return rows.map((row) => row.id);
  }

  /** The user, locked until the transaction ends, so a before/after read of it stays exact. */
  async lockOne(id: string): Promise<User> {
    const [row] = await sqlRows<Record<string, unknown>>(
      this.txHost.tx,
      `SELECT * FROM users WHERE id = $1 FOR NO KEY UPDATE`,
      [id],
    );
    if (!row) throw new NoUserCondition(id);
    return this.fromRow(row);
  }

  async setCanManageNodes(id: string, value: boolean): Promise<void> {
    await this.users.update({ id }, { canManageNodes: value });
  }

  /** `bytes` null: follow the default limit again. */
  async setTrafficLimit(id: string, bytes: string | null): Promise<void> {
    await this.users.update({ id }, { trafficLimitBytes: bytes });
  }

  // Subscriptions

  async buyerLinks(userId: string): Promise<BuyerLinks | null> {
    const [row] = await sqlRows<BuyerLinks>(
      this.txHost.tx,
      `SELECT u.referred_by_user_id AS "referrerId", u.referred_by_partner_id AS "partnerId",
         p.commission_percent AS "partnerPercent"
       FROM users u LEFT JOIN users p ON p.id = u.referred_by_partner_id WHERE u.id = $1`,
      [userId],
    );
    return row ?? null;
  }

  /** The buyer's subscription: the plan's days from max(now, expiry), that plan, traffic reset. */
  async extendForPlan(userId: string, planName: string): Promise<SubscriptionRecord> {
    const [row] = await sqlRows<SubscriptionRecord>(
      this.txHost.tx,
      `UPDATE users SET plan_name = p.name, traffic_used_bytes = 0,
         subscription_expires_at = ${extended('p.duration_days')}
       FROM plans p WHERE users.id = $1 AND p.name = $2
       RETURNING users.plan_name AS "planName", users.subscription_expires_at AS "expiresAt"`,
      [userId, planName],
    );
    return row;
  }

  /** Gives `days` to a referrer, on its own plan, or on `fallbackPlan` when it has none. */
  async giveDays(userId: string, days: number, fallbackPlan: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE users SET plan_name = COALESCE(plan_name, $3),
         subscription_expires_at = ${extended('$2')}
       WHERE id = $1 RETURNING id`,
      [userId, days, fallbackPlan],
    );
    return rows.length > 0;
  }

  /**
   * Starts the trial once per Telegram account: one conditional update, so concurrent requests
   * cannot both succeed. A running subscription keeps its plan and is lengthened; otherwise the
   * account gets the trial plan with a fresh traffic counter. Null when refused.
   */
  async startTrial(
    userId: string,
    days: number,
    planName: string,
  ): Promise<SubscriptionRecord | null> {
    const active = `(plan_name IS NOT NULL AND subscription_expires_at > now())`;
    const [row] = await sqlRows<SubscriptionRecord>(
      this.txHost.tx,
      `UPDATE users SET trial_used_at = now(),
         plan_name = CASE WHEN ${active} THEN plan_name ELSE $3 END,
         traffic_used_bytes = CASE WHEN ${active} THEN traffic_used_bytes ELSE 0 END,
         subscription_expires_at = ${extended('$2')}
       WHERE id = $1 AND tg_id IS NOT NULL AND trial_used_at IS NULL
       RETURNING plan_name AS "planName", subscription_expires_at AS "expiresAt"`,
      [userId, days, planName],
    );
    return row ?? null;
  }

  /** The user's current subscription; null when it has never had one. */
  async subscriptionOf(userId: string): Promise<SubscriptionRecord | null> {
    const [row] = await sqlRows<SubscriptionRecord>(
      this.txHost.tx,
      `SELECT plan_name AS "planName", subscription_expires_at AS "expiresAt" FROM users
       WHERE id = $1 AND plan_name IS NOT NULL AND subscription_expires_at IS NOT NULL`,
      [userId],
    );
    return row ?? null;
  }

  /** The partner account with this code; null when no partner has it. */
  async findPartnerByCode(code: string): Promise<PartnerRef | null> {
    const [row] = await sqlRows<PartnerRef>(
      this.txHost.tx,
      `SELECT id, partner_code AS "partnerCode" FROM users
       WHERE partner_code = $1 AND role = 'partner'`,
      [code],
    );
    return row ?? null;
  }

  /**
   * Attaches the buyer to the partner if it has none yet: one conditional update, so of racing
   * attachments exactly one wins. `current`: the partner the buyer has when it already had one
   * (null only if that partner was deleted in between).
   */
  async attachToPartner(
    buyerId: string,
    partnerId: string,
  ): Promise<{ attached: true } | { attached: false; current: string | null }> {
    const [attached] = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE users SET referred_by_partner_id = $2
       WHERE id = $1 AND referred_by_partner_id IS NULL RETURNING id`,
      [buyerId, partnerId],
    );
    if (attached) return { attached: true };
    const [row] = await sqlRows<{ current: string | null }>(
      this.txHost.tx,
      `SELECT referred_by_partner_id AS current FROM users WHERE id = $1`,
      [buyerId],
    );
    if (!row) throw new NoUserCondition(buyerId);
    return { attached: false, current: row.current };
  }

  /** The traffic standing of each of these users that exists (in no particular order). */
  trafficStandings(ids: string[], defaultBytes: bigint): Promise<TrafficStanding[]> {
    return sqlRows<TrafficStanding>(this.txHost.tx, trafficStandingsSql('$1', '$2'), [
      ids,
      defaultBytes.toString(),
    ]);
  }

  /**
   * Adds counted bytes to users' traffic counters (saturating at the bigint maximum) with one
   * UPDATE over arrays, which also takes the rows' locks in id order: the arrays are sorted by id
   * and the join is ordered (`ORDERED_JOINS`, for the rest of the transaction), so the UPDATE
   * visits, and locks, the users in id order. Concurrent reports over the same users then queue up
   * instead of deadlocking, without a separate locking pass over the rows. `bytes` maps user ids
   * to counted bytes; call inside a transaction.
   */
  async addTraffic(
    bytes: ReadonlyMap<Uuid, number | bigint>,
    defaultBytes: bigint,
  ): Promise<TrafficAdded> {
    const ids = sortedUuids([...bytes.keys()]);
    const idArray = uuidArray(ids);
    await preparedRows(this.txHost.tx, 'ordered_joins', ORDERED_JOINS, []);
    // Planned at each call, not prepared: the join the planner picks depends on how many users.
    const [row] = await sqlRows<{ updated: number; overLimit: string[] }>(
      this.txHost.tx,
      ADD_TRAFFIC_SQL,
      [
        idArray,
        bigintArray(ids.map((id) => atMostBigintMax(bytes.get(id)!))),
        defaultBytes.toString(),
      ],
    );
    if (row.updated === ids.length) return { overLimit: row.overLimit, missing: [] };
    // Some ids name no user (rare: a deleted account still connected). The others are locked now.
    const found = new Set(
      (
        await sqlRows<{ id: string }>(
          this.txHost.tx,
          `SELECT id FROM users WHERE id = ANY($1::uuid[])`,
          [idArray],
        )
      ).map((user) => user.id),
    );
    return { overLimit: row.overLimit, missing: ids.filter((id) => !found.has(id)) };
  }

  /**
   * Records the user-to-user referrer, the account with Telegram id `referrerTgId`: once (the first
   * wins), never oneself, and only while the user has not paid an invoice. One conditional update,
   * so concurrent or repeated `/start` links cannot change an existing referrer.
   */
  async attachReferrerByTgId(userId: string, referrerTgId: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE users u SET referred_by_user_id = r.id
         FROM users r
        WHERE u.id = $1 AND r.tg_id = $2 AND r.id <> u.id AND u.referred_by_user_id IS NULL
          AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.user_id = u.id AND i.status = 'paid')
        RETURNING u.id`,
      [userId, referrerTgId],
    );
    return rows.length > 0;
  }
}
