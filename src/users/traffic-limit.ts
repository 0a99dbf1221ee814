import { DEFAULT_TRAFFIC_LIMIT_KEY } from '../settings-store/app-settings.repository';

/**
 * The traffic-limit rule, in TypeScript for one user read into memory and in SQL for statements
 * over many. A user's limit is the staff's per-user override, else the limit of the plan of a
 * running subscription, else the default: the stored setting, else TRAFFIC_LIMIT_DEFAULT_BYTES.
 * The trial has no plan row, so the default. A user is over the limit once its use reaches it.
 * test/traffic-limit.e2e-spec.ts runs both forms on the same users and compares them.
 */

/** What a user's traffic limit falls back to when it has no override of its own. */
export interface TrafficLimits {
  /** The default limit: the stored setting, else TRAFFIC_LIMIT_DEFAULT_BYTES. */
  defaultBytes: bigint;
  /** The limit of the plan named by the user's `plan_name`; null when no plan row has that name. */
  planBytes: bigint | null;
}

/** The columns of a user the rule reads. */
export interface LimitedUser {
  trafficLimitBytes: string | null;
  planName: string | null;
  subscriptionExpiresAt: Date | null;
}

/** The limit that applies to the user now (the rule above). */
export function trafficLimitOf(user: LimitedUser, limits: TrafficLimits, now = new Date()): bigint {
  if (user.trafficLimitBytes !== null) return BigInt(user.trafficLimitBytes);
  const running = user.subscriptionExpiresAt !== null && user.subscriptionExpiresAt > now;
  if (running && user.planName !== null && limits.planBytes !== null) return limits.planBytes;
  return limits.defaultBytes;
}

/** The default limit: the stored value (digits) when there is one, else the setting's. */
export function defaultLimitOf(stored: string | null, fallback: bigint): bigint {
  return stored === null ? fallback : BigInt(stored);
}

/** Whether a user that used `usedBytes` is at or over `limitBytes` (both bigint or digits). */
export function isOverLimit(usedBytes: bigint | string, limitBytes: bigint | string): boolean {
  return BigInt(usedBytes) >= BigInt(limitBytes);
}

/**
 * SQL: the default limit, one row `d.bytes`: the stored value, else the bigint parameter or
 * literal `fallback` (TRAFFIC_LIMIT_DEFAULT_BYTES). `defaultLimitOf` in SQL.
 */
export const defaultLimitSql = (fallback: string): string =>
  `(SELECT COALESCE((SELECT (s.value #>> '{}')::bigint FROM app_settings s
     WHERE s.key = '${DEFAULT_TRAFFIC_LIMIT_KEY}'), ${fallback}::bigint) AS bytes) d`;

/**
 * SQL: the limit that applies to user `u` now, given its plan `p` (left-joined on `plan_name`) and
 * the default `d` (`defaultLimitSql`). `trafficLimitOf` in SQL.
 */
export const EFFECTIVE_LIMIT_SQL = `COALESCE(u.traffic_limit_bytes,
  CASE WHEN u.subscription_expires_at > now() THEN p.traffic_limit_bytes END, d.bytes)`;

/** SQL: user `u` is at or over its limit (`isOverLimit` of `EFFECTIVE_LIMIT_SQL`). */
export const OVER_LIMIT_SQL = `u.traffic_used_bytes >= ${EFFECTIVE_LIMIT_SQL}`;
