import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { bigintArray, preparedRows, sqlRows, uuidArray } from '../database/sql';
import { sortedUuids, type Uuid } from '../common/uuid';
import { defaultLimitSql, EFFECTIVE_LIMIT_SQL, OVER_LIMIT_SQL } from './traffic-limit';

/** A user's traffic as the proxy sees it: the limit that applies now, the use, the subscription. */
export interface TrafficStanding {
  id: string;
  limitBytes: string;
  usedBytes: string;
  subscriptionExpiresAt: Date | null;
  /** A subscription runs and the account is not blocked. */
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
}

/**
 * The `TrafficStanding` rows of the users whose ids are in the uuid[] parameter `ids`, `fallback`
 * the parameter holding the default limit in bytes. For statements that read standings along with
 * other work (the proxy's token validation).
 */
export const trafficStandingsSql = (ids: string, fallback: string): string =>
  `SELECT u.id, ${EFFECTIVE_LIMIT_SQL}::text AS "limitBytes",
          u.traffic_used_bytes::text AS "usedBytes",
          u.subscription_expires_at AS "subscriptionExpiresAt",
          COALESCE(u.subscription_expires_at > now(), false) AND u.blocked_at IS NULL AS active,
          u.blocked_at IS NOT NULL AS blocked
     FROM users u LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${defaultLimitSql(fallback)}
    WHERE u.id = ANY(${ids}::uuid[])`;

/**
 * Until `PLANNER_RESTORED`, joins are nested loops or merge joins and tables are read
 * through an index: an UPDATE over a sorted array then visits, and locks, rows in id order (see
 * `addTraffic`). A nested loop is driven by the array, in its order; a merge join reads the
 * primary key's index and the array sorted, both by id. The planner picks the cheaper: a nested
 * loop for a few users of a large table, a merge join when a report names a large share of them.
 * Without the scan settings, statistics that call the table tiny (analyzed when it held one row)
 * let the planner scan the table itself first, in its physical order.
 */
export const ORDERED_JOINS = `WITH before AS MATERIALIZED (
    SELECT current_setting('enable_hashjoin') AS hashjoin,
           current_setting('enable_seqscan') AS seqscan,
           current_setting('enable_bitmapscan') AS bitmapscan
  )
  SELECT hashjoin, seqscan, bitmapscan,
         set_config('enable_hashjoin', 'off', true),
         set_config('enable_seqscan', 'off', true),
         set_config('enable_bitmapscan', 'off', true)
    FROM before`;

/** The settings `ORDERED_JOINS` found, read before it changed them. */
export interface PlannerSettings {
  hashjoin: string;
  seqscan: string;
  bitmapscan: string;
}

/**
 * Undoes `ORDERED_JOINS` with the values it found (`$1`–`$3`: hash join, sequential scan, bitmap
 * scan), so the caller's later statements in the transaction plan as they would have. (Reading
 * `pg_settings` for them instead cost 1.5 ms a report, and gave the server's defaults rather than
 * the session's own values.)
 */
export const PLANNER_RESTORED = `SELECT set_config('enable_hashjoin', $1, true),
                                       set_config('enable_seqscan', $2, true),
                                       set_config('enable_bitmapscan', $3, true)`;

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
              u.subscription_expires_at, v.bytes AS added
  )
  SELECT count(*)::int AS updated,
         COALESCE(array_agg(u.id) FILTER (WHERE ${OVER_LIMIT_SQL}),
                  '{}') AS "overLimit",
         COALESCE(array_agg(u.id) FILTER (WHERE ${OVER_LIMIT_SQL}
                    AND u.traffic_used_bytes - u.added < ${EFFECTIVE_LIMIT_SQL}),
                  '{}') AS crossed
    FROM added u LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${defaultLimitSql('$3')}`;

/** Bytes to add, capped at BIGINT_MAX: a counter given that many is full either way. */
const atMostBigintMax = (bytes: bigint): bigint => (bytes > BIGINT_MAX ? BIGINT_MAX : bytes);

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
   * and the join is ordered (`ORDERED_JOINS`, for this statement only), so the UPDATE
   * visits, and locks, the users in id order. Concurrent reports over the same users then queue up
   * instead of deadlocking, without a separate locking pass over the rows. `bytes` maps user ids
   * to counted bytes; call inside a transaction.
   */
  async addTraffic(bytes: ReadonlyMap<Uuid, bigint>, defaultBytes: bigint): Promise<TrafficAdded> {
    const ids = sortedUuids([...bytes.keys()]);
    const idArray = uuidArray(ids);
    const [before] = await preparedRows<PlannerSettings>(this.txHost.tx, ORDERED_JOINS, []);
    // Planned at each call, not prepared: the join the planner picks depends on how many users.
    const [row] = await sqlRows<{ updated: number; overLimit: string[]; crossed: string[] }>(
      this.txHost.tx,
      ADD_TRAFFIC_SQL,
      [
        idArray,
        bigintArray(ids.map((id) => atMostBigintMax(bytes.get(id)!))),
        defaultBytes.toString(),
      ],
    );
    await preparedRows(this.txHost.tx, PLANNER_RESTORED, [
      before.hashjoin,
      before.seqscan,
      before.bitmapscan,
    ]);
    const { overLimit, crossed } = row;
    if (row.updated === ids.length) return { overLimit, crossed, missing: [] };
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
    return { overLimit, crossed, missing: ids.filter((id) => !found.has(id)) };
  }
}
