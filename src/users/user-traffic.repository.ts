import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { atMostBigintMax, type ByteCount, saturatingAddSql, sumByUser } from '../common/byte-count';
import { bigintArray, preparedRows, sqlRows, uuidArray } from '../database/sql';
import { type Uuid, type UuidRange, WHOLE_UUID_RANGE } from '../common/uuid';
import { subscriptionActiveSql } from './subscription-active';
import { defaultLimitSql, EFFECTIVE_LIMIT_SQL, OVER_LIMIT_SQL } from './traffic-limit';
import { atMidnightSql, nextResetSql, RESET_ANCHOR_SQL, userNextResetSql } from './traffic-reset';

/** A user's traffic as the proxy sees it: the limit that applies now, the use, the subscription. */
export interface TrafficStanding {
  id: string;
  limitBytes: string;
  usedBytes: string;
  subscriptionExpiresAt: Date | null;
  /** The subscription is active (`subscriptionActiveSql`: it runs, the account not blocked). */
  active: boolean;
  /** Staff blocked the account. */
  blocked: boolean;
}

/** What adding traffic did: how many of the users exist, and which are now at or over their limit. */
export interface TrafficAdded {
  /** Users at or over their limit after the addition. */
  overLimit: string[];
  /** Of those, the users this addition took to their limit (they were under it before). */
  crossed: string[];
  /** Ids given that name no user (nothing was added for them). */
  missing: string[];
  /** Users waiting for their first connection whose first traffic this was (`startOnFirstUse`). */
  firstUse: string[];
}

/** What one batch of the reset job did. */
export interface ResetBatch {
  /** Due users the batch took (reset, or cleared when their subscription had ended). */
  picked: number;
  /** Users whose traffic it set back to zero, each recorded in `traffic_resets`. */
  reset: number;
}

/** SQL: 80% of the limit `limit` (a bigint expression), rounded up, without overflow. */
const warnAt = (limit: string): string => `(${limit} - ${limit} / 5)`;

/**
 * The `TrafficStanding` rows of the users whose ids are in the uuid[] parameter `ids`, `fallback`
 * the parameter holding the default limit in bytes. For statements that read standings along with
 * other work (the proxy's token validation).
 */
export const trafficStandingsSql = (ids: string, fallback: string): string =>
  `SELECT u.id, ${EFFECTIVE_LIMIT_SQL}::text AS "limitBytes",
          u.traffic_used_bytes::text AS "usedBytes",
          u.subscription_expires_at AS "subscriptionExpiresAt",
          ${subscriptionActiveSql('u')} AS active,
          u.blocked_at IS NOT NULL AS blocked
     FROM users u LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${defaultLimitSql(fallback)}
    WHERE u.id = ANY(${ids}::uuid[])`;

/**
 * Until the transaction ends, joins are nested loops or merge joins and tables are read through
 * an index: an UPDATE over a sorted array then visits, and locks, rows in id order (see
 * `addTraffic`). A nested loop is driven by the array, in its order; a merge join reads the
 * primary key's index and the array sorted, both by id. The planner picks the cheaper: a nested
 * loop for a few users of a large table, a merge join when a report names a large share of them.
 * Without the scan settings, statistics that call the table tiny (analyzed when it held one row)
 * let the planner scan the table itself first, in its physical order. Transaction-local
 * (`set_config(…, true)`): the pooled connection plans as before once the transaction ends.
 */
export const ORDERED_JOINS_SETTINGS = `set_config('enable_hashjoin', 'off', true),
  set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`;
export const ORDERED_JOINS = `SELECT ${ORDERED_JOINS_SETTINGS}`;

/**
 * The CTEs `added` and `added_summary`: adds `bytes` (a bigint[] parameter, each at most
 * BIGINT_MAX) to the counters of the users `ids` (uuid[]), saturating at BIGINT_MAX, `fallback`
 * the default limit; `added_summary` is one row (`AddedSummary`): how many users it updated, and
 * which are now at or over their limit. In bigint arithmetic: the counter is never negative (a
 * CHECK), so `max − used` cannot overflow, and numeric arithmetic made the statement about a sixth
 * slower. Joined in id order under `ORDERED_JOINS_SETTINGS` (see `addTraffic`), so that it locks
 * the users in id order.
 */
export const addTrafficCtes = (ids: string, bytes: string, fallback: string): string => `added AS (
    UPDATE users u
       SET traffic_used_bytes = ${saturatingAddSql('u.traffic_used_bytes', 'v.bytes')}
      FROM unnest(${ids}::uuid[], ${bytes}::bigint[]) AS v(id, bytes)
     WHERE u.id = v.id
    RETURNING u.id, u.traffic_used_bytes, u.traffic_limit_bytes, u.plan_name,
              u.subscription_expires_at, v.bytes AS added, u.tg_id IS NOT NULL AS tg,
              u.subscription_on_hold_until AS hold
  ), added_summary AS (
  SELECT count(*)::int AS updated,
         COALESCE(array_agg(u.id) FILTER (WHERE ${OVER_LIMIT_SQL}),
                  '{}') AS "overLimit",
         COALESCE(array_agg(u.id) FILTER (WHERE ${OVER_LIMIT_SQL}
                    AND u.traffic_used_bytes - u.added < ${EFFECTIVE_LIMIT_SQL}),
                  '{}') AS crossed,
         COALESCE(array_agg(u.id) FILTER (WHERE u.tg AND NOT ${OVER_LIMIT_SQL}
                    AND u.traffic_used_bytes >= ${warnAt(EFFECTIVE_LIMIT_SQL)}
                    AND u.traffic_used_bytes - u.added < ${warnAt(EFFECTIVE_LIMIT_SQL)}),
                  '{}') AS "warn80",
         COALESCE(array_agg(u.id) FILTER (WHERE u.hold > now() AND u.added > 0),
                  '{}') AS "firstUse"
    FROM added u LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${defaultLimitSql(fallback)}
  )`;

/** `addTrafficCtes` alone: `$1` the users, `$2` their bytes, `$3` the default limit. */
export const ADD_TRAFFIC_SQL = `WITH ${addTrafficCtes('$1', '$2', '$3')} SELECT * FROM added_summary`;

/** The row of `added_summary` (`addTrafficCtes`). */
export interface AddedSummary {
  updated: number;
  overLimit: string[];
  crossed: string[];
  warn80: string[];
  firstUse: string[];
}

/** Bytes for users, summed by user in id order, as `addTrafficCtes` takes them. */
export interface TrafficAddition {
  ids: Uuid[];
  /** The `uuid[]` parameter of `ids`. */
  idArray: Buffer;
  /** The `bigint[]` parameter of their bytes, each at most BIGINT_MAX. */
  bytesArray: Buffer;
}

/**
 * `entries` (user ids with counted bytes, in any order, an id as often as it comes) as one
 * addition: each user's bytes summed, the users in id order, so that the UPDATE locks them so.
 */
export function trafficAddition(entries: {
  ids: readonly Uuid[];
  bytes: readonly ByteCount[];
}): TrafficAddition {
  const { ids, bytes } = sumByUser(entries.ids, entries.bytes);
  return { ids, idArray: uuidArray(ids), bytesArray: bigintArray(bytes.map(atMostBigintMax)) };
}

/**
 * Where a batch of the reset job finds its due users: by a range of their ids in `users` (after a
 * midnight, or many due), or through `next_traffic_resets`' index on the time (a few resets not at
 * a midnight, as in most minutes: no read of `users` beyond them). Migration 0027 says why.
 */
export type ResetDueSource = 'id-range' | 'next-resets';

/**
 * `next_traffic_resets` rows due at `$1` whose user is due too: a row left behind (a reset that
 * moved without its row, as an instance of an older version makes) neither counts nor takes a
 * batch's place; the user's next reset writes the row again.
 */
const NEXT_RESETS_DUE = `FROM next_traffic_resets n JOIN users nu ON nu.id = n.user_id
  WHERE n.reset_at <= $1::timestamptz AND nu.traffic_reset_at <= $1::timestamptz`;

const DUE_USERS: Record<ResetDueSource, string> = {
  'id-range': 'u.id > $4::uuid AND u.id <= $5::uuid',
  'next-resets': `u.id IN (SELECT n.user_id ${NEXT_RESETS_DUE}
                              AND n.user_id > $4::uuid AND n.user_id <= $5::uuid
                            ORDER BY n.reset_at LIMIT $2)`,
};

/**
 * `$1` the service's clock: how many users are due then. `in-users`: all of them and those at a
 * midnight (`atMidnight`), read from `users` (a scan; migration 0027); `next-resets`: those whose
 * row of `next_traffic_resets` is due, through its index.
 */
export const COUNT_RESETS_DUE_SQL = {
  'in-users': `SELECT count(*)::int AS n,
      count(*) FILTER (WHERE ${atMidnightSql('traffic_reset_at')})::int AS "atMidnight"
    FROM users WHERE traffic_reset_at <= $1::timestamptz`,
  'next-resets': `SELECT count(*)::int AS n ${NEXT_RESETS_DUE}`,
} as const;

/**
 * One batch of the reset job (`UserTrafficRepository.resetDue`): `$1` the service's clock,
 * `$2` the most users it takes, `$3` TRAFFIC_LIMIT_DEFAULT_BYTES, and the users with ids in
 * (`$4`, `$5`], found as `source` says. Only the users a reset takes back under their limit are a
 * credential change for the nodes (the others never left them). The traffic warnings of the period
 * a reset ends go with it (their key is the reset that ends their period), so that table holds at
 * most a period's worth. The batch keeps its users' rows of `next_traffic_resets` itself, in two
 * statements for the whole batch instead of the users trigger's one for each user (migration 0027).
 */
export const resetDueSql = (source: ResetDueSource): string => `WITH recorded_here AS MATERIALIZED (
         -- Before any row: this statement records its users' credential changes and next resets
         -- itself, once (migrations 0024, 0027), so the users row triggers leave them alone.
         SELECT set_config('vpn.resets_recorded', 'on', true) AS marked
       ), due AS (
         SELECT u.id, u.traffic_used_bytes AS before, u.traffic_reset_at AS period_start,
                u.subscription_expires_at > $1::timestamptz AS running, ${OVER_LIMIT_SQL} AS over,
                ${nextResetSql('p.traffic_reset', 'p.reset_day', RESET_ANCHOR_SQL, '$1::timestamptz')} AS next_at
           FROM users u LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN recorded_here
                CROSS JOIN ${defaultLimitSql('$3')}
          WHERE u.traffic_reset_at <= $1::timestamptz AND ${DUE_USERS[source]}
          LIMIT $2
          FOR NO KEY UPDATE OF u SKIP LOCKED
       ), reset AS (
         UPDATE users u
            SET traffic_used_bytes = CASE WHEN d.running AND d.next_at IS NOT NULL THEN 0
                                          ELSE u.traffic_used_bytes END,
                traffic_reset_at = CASE WHEN d.running THEN d.next_at END
           FROM due d
          -- The ids as an array too: the rows are found through the primary key whatever the
          -- planner makes of the CTE (it joined by hashing the whole table below a million rows).
          WHERE u.id = ANY((SELECT array_agg(id) FROM due)::uuid[]) AND u.id = d.id
         RETURNING u.id, d.before, d.period_start, d.running AND d.next_at IS NOT NULL AS done, d.over,
                   u.traffic_reset_at AS next_reset
       ), next_kept AS (
         -- Only resets not at a midnight have rows (migration 0027): none in a mass reset there.
         INSERT INTO next_traffic_resets (user_id, reset_at)
         SELECT id, next_reset FROM reset
          WHERE next_reset IS NOT NULL AND NOT ${atMidnightSql('next_reset')}
         ON CONFLICT (user_id) DO UPDATE SET reset_at = EXCLUDED.reset_at
       ), next_dropped AS (
         DELETE FROM next_traffic_resets n
          WHERE n.user_id = ANY((SELECT array_agg(id) FROM reset
                                  WHERE NOT ${atMidnightSql('period_start')}
                                    AND (next_reset IS NULL OR ${atMidnightSql('next_reset')}))::uuid[])
       ), recorded AS (
         INSERT INTO traffic_resets (user_id, period_start, bytes_before, reset_at)
         SELECT id, period_start, before, $1::timestamptz FROM reset WHERE done
         ON CONFLICT DO NOTHING RETURNING 1
       ), warned AS (
         DELETE FROM traffic_warnings w USING reset r
          WHERE w.user_id = r.id AND w.period_key <= r.period_start
       ), credentials AS (
         -- Nodes take back the users a reset puts under their limit: one change per such user.
         SELECT record_credential_changes(array_agg(id), array_fill(NULL::uuid, ARRAY[count(*)::int]))
           FROM reset WHERE done AND over
       )
       SELECT (SELECT count(*) FROM reset)::int AS picked,
              (SELECT count(*) FROM recorded)::int AS reset,
              (SELECT count(*) FROM credentials)::int AS recorded_credentials,
              -- Last, after every row (the trigger's condition is read as each row changes): a
              -- later statement of the same transaction gets the trigger again.
              set_config('vpn.resets_recorded', '', true) AS unmarked`;

const RESET_DUE: Record<ResetDueSource, string> = {
  'id-range': resetDueSql('id-range'),
  'next-resets': resetDueSql('next-resets'),
};

/**
 * Users' traffic, in their own columns: the counters the proxy's reports add to, the per-user
 * limit override, and the standings the proxy reads (the rule is `traffic-limit.ts`). Statements
 * run in the caller's transaction, when there is one.
 */
@Injectable()
export class UserTrafficRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** `bytes` null: follow the default limit again. */
  async setTrafficLimit(id: string, bytes: string | null): Promise<void> {
    await sqlRows(this.txHost.tx, `UPDATE users SET traffic_limit_bytes = $2 WHERE id = $1`, [
      id,
      bytes,
    ]);
  }

  /** Sets the user's used traffic back to 0; false when there is no such user. */
  async resetUsed(id: string): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `UPDATE users SET traffic_used_bytes = 0 WHERE id = $1 RETURNING 1`,
      [id],
    );
    return rows.length > 0;
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
   * and the join is ordered (`ORDERED_JOINS`), so the UPDATE visits, and locks, the users in id
   * order. Concurrent reports over the same users then queue up instead of deadlocking, without a
   * separate locking pass over the rows. `entries` as `trafficAddition` takes them; call inside a
   * transaction, whose later statements keep the ordered joins (the traffic batch's are all
   * lookups by key). The traffic batch runs `addTrafficCtes` within a larger statement instead,
   * then `settleAddition`.
   */
  async addTraffic(
    entries: { ids: readonly Uuid[]; bytes: readonly ByteCount[] },
    defaultBytes: bigint,
  ): Promise<TrafficAdded> {
    const addition = trafficAddition(entries);
    await preparedRows(this.txHost.tx, ORDERED_JOINS, []);
    // Planned at each call, not prepared: the join the planner picks depends on how many users.
    const [row] = await sqlRows<AddedSummary>(this.txHost.tx, ADD_TRAFFIC_SQL, [
      addition.idArray,
      addition.bytesArray,
      defaultBytes.toString(),
    ]);
    return this.settleAddition(addition, row);
  }

  /**
   * What an addition did, once its statement ran in the caller's transaction: the warnings it
   * brought are kept for the bot, and the ids that name no user are found (rare: a deleted
   * account still connected; the others are locked by then).
   */
  async settleAddition(addition: TrafficAddition, row: AddedSummary): Promise<TrafficAdded> {
    const { overLimit, crossed, firstUse } = row;
    await this.recordWarnings(row.warn80, crossed);
    if (row.updated === addition.ids.length) return { overLimit, crossed, firstUse, missing: [] };
    const found = new Set(
      (
        await sqlRows<{ id: string }>(
          this.txHost.tx,
          `SELECT id FROM users WHERE id = ANY($1::uuid[])`,
          [addition.idArray],
        )
      ).map((user) => user.id),
    );
    return {
      overLimit,
      crossed,
      firstUse,
      missing: addition.ids.filter((id) => !found.has(id)),
    };
  }

  /**
   * Keeps a warning for each user that crossed 80% (`at80`) or its limit (`at100`), once per user,
   * kind and traffic period (the next reset, else the subscription's end), for the bot to send;
   * none for accounts that turned warnings off or cannot be written to (no Telegram).
   */
  private async recordWarnings(at80: string[], at100: string[]): Promise<void> {
    if (at80.length + at100.length === 0) return;
    await this.txHost.tx.query(
      `INSERT INTO traffic_warnings (user_id, kind, period_key)
       SELECT u.id, w.kind, COALESCE(u.traffic_reset_at, u.subscription_expires_at, 'infinity')
         FROM unnest($1::uuid[], $2::text[]) AS w(id, kind) JOIN users u ON u.id = w.id
         LEFT JOIN bot_chats c ON c.tg_id = u.tg_id
        WHERE u.tg_id IS NOT NULL AND NOT COALESCE(c.warnings_off, false)
       ON CONFLICT DO NOTHING`,
      [
        [...at80, ...at100],
        [...at80.map(() => 'traffic80'), ...at100.map(() => 'traffic100')],
      ],
    );
  }

  /**
   * Starts the subscriptions of these users that still wait for their first connection: the days
   * run from now (the end moves from hold + days to now + days), the next reset counts from now.
   */
  async startOnFirstUse(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.txHost.tx.query(
      `UPDATE users u SET subscription_started_at = now(),
         subscription_expires_at = now() + (u.subscription_expires_at - u.subscription_on_hold_until),
         subscription_on_hold_until = NULL,
         traffic_reset_at = ${userNextResetSql('u.plan_name', 'now()', 'now()')}
       WHERE u.id = ANY($1::uuid[]) AND u.subscription_on_hold_until > now()`,
      [ids],
    );
  }

  /**
   * The next reset of every running subscriber of the plan, again from now: after staff changed
   * the plan's reset rule.
   */
  async rescheduleResets(planName: string): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE users u SET traffic_reset_at = ${nextResetSql(
        'p.traffic_reset',
        'p.reset_day',
        RESET_ANCHOR_SQL,
        'now()',
      )}
         FROM plans p WHERE p.name = $1 AND u.plan_name = p.name AND u.subscription_expires_at > now()`,
      [planName],
    );
  }

  /**
   * Users whose reset is due at `now` (the service's clock), counted as `where` says
   * (`COUNT_RESETS_DUE_SQL`); `atMidnight` only when counted in `users`.
   */
  async countResetsDue(
    now: Date,
    where: keyof typeof COUNT_RESETS_DUE_SQL,
  ): Promise<{ n: number; atMidnight?: number }> {
    const [row] = await sqlRows<{ n: number; atMidnight?: number }>(
      this.txHost.tx,
      COUNT_RESETS_DUE_SQL[where],
      [now],
    );
    return row;
  }

  /** When the reset job last found nobody due at a midnight in `users`; null before the first. */
  async sweptUntil(): Promise<Date | null> {
    const [row] = await sqlRows<{ at: Date }>(
      this.txHost.tx,
      `SELECT swept_until AS at FROM traffic_reset_sweeps`,
    );
    return row?.at ?? null;
  }

  /** Records that the reset job found nobody due at a midnight in `users` at `at`. */
  async recordSwept(at: Date): Promise<void> {
    await sqlRows(
      this.txHost.tx,
      `INSERT INTO traffic_reset_sweeps (id, swept_until) VALUES (true, $1)
       ON CONFLICT (id) DO UPDATE SET swept_until = EXCLUDED.swept_until`,
      [at],
    );
  }

  /**
   * One batch of the reset job, one statement: up to `batch` users of the id range whose reset is
   * due at `now` (the service's clock) have their used traffic set to zero, the reset recorded
   * (user, the period it opens, bytes before) and their next reset set; a due user whose
   * subscription has ended has its reset cleared instead. Rows another transaction holds (a
   * traffic report) are skipped, not waited for: the next run takes them, so the job never queues
   * behind reports. A user is due again only at its next reset, so a second run, a second instance
   * or a run restarted halfway resets nobody twice.
   */
  async resetDue(
    now: Date,
    batch: number,
    defaultBytes: bigint,
    ids: UuidRange = WHOLE_UUID_RANGE,
    source: ResetDueSource = 'id-range',
  ): Promise<ResetBatch> {
    const [row] = await sqlRows<ResetBatch>(this.txHost.tx, RESET_DUE[source], [
      now,
      batch,
      defaultBytes.toString(),
      ids.after,
      ids.upTo,
    ]);
    return { picked: row.picked, reset: row.reset };
  }
}
