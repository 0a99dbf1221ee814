import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';
import { nextResetSql, userNextResetSql } from './traffic-reset';

/** A subscription, kept in the user's own columns. */
export interface SubscriptionRecord {
  planName: string;
  expiresAt: Date;
  /** Null while an on_first_use subscription waits for its first connection. */
  startedAt: Date | null;
  /** Set while (and after) an on_first_use subscription waited: the latest it starts. */
  onHoldUntil: Date | null;
}

/** The `SubscriptionRecord` columns of `users`. */
const RECORD = `users.plan_name AS "planName", users.subscription_expires_at AS "expiresAt",
  users.subscription_started_at AS "startedAt", users.subscription_on_hold_until AS "onHoldUntil"`;

/** `expires_at` moved on by some days from whichever is later: now, or the current expiry. */
const extended = (days: string): string =>
  `GREATEST(now(), COALESCE(subscription_expires_at, now())) + make_interval(days => ${days})`;

/** The user's subscription runs (or waits for its first connection, which also counts). */
const RUNNING = `COALESCE(users.subscription_expires_at > now(), false)`;

/**
 * The start, hold and next reset of a subscription that `planName` (an expression) may begin now:
 * a running one keeps its own; otherwise it starts now, its traffic resets counted from now, or,
 * when `holdDays` (an int expression) is not null, it waits that long for its first connection.
 */
const startedIfNotRunning = (planName: string, holdDays = 'NULL::int'): string =>
  `subscription_started_at = CASE WHEN ${RUNNING} THEN users.subscription_started_at
                                  WHEN ${holdDays} IS NOT NULL THEN NULL ELSE now() END,
   subscription_on_hold_until = CASE WHEN ${RUNNING} THEN users.subscription_on_hold_until
                                     WHEN ${holdDays} IS NOT NULL
                                     THEN now() + make_interval(days => ${holdDays}) END,
   traffic_reset_at = CASE WHEN ${RUNNING} THEN users.traffic_reset_at
                           ELSE ${userNextResetSql(planName, 'now()', 'now()')} END`;

/**
 * Subscriptions, kept in the user's own columns (`plan_name`, `subscription_expires_at`, the trial):
 * every statement that starts or moves one. Each is one conditional UPDATE, so concurrent callers
 * each apply once. Statements run in the caller's transaction, when there is one.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * The buyer's subscription: the plan's days from max(now, expiry), that plan, traffic reset, the
   * next reset counted from now (a `rolling_month` from the subscription's start). A purchase that
   * starts a subscription of an `on_first_use` plan waits for the first connection: on hold for
   * the plan's `on_hold_max_days`, ending that much later than the days alone.
   */
  async extendForPlan(userId: string, planName: string): Promise<SubscriptionRecord> {
    const onHold = `(NOT ${RUNNING} AND p.starts = 'on_first_use')`;
    const [row] = await sqlRows<SubscriptionRecord>(
      this.txHost.tx,
      `UPDATE users SET plan_name = p.name, traffic_used_bytes = 0,
         subscription_started_at = CASE WHEN ${RUNNING} THEN users.subscription_started_at
                                        WHEN ${onHold} THEN NULL ELSE now() END,
         subscription_on_hold_until = CASE WHEN ${RUNNING} THEN users.subscription_on_hold_until
                                           WHEN ${onHold} THEN now() + make_interval(days => p.on_hold_max_days) END,
         traffic_reset_at = ${nextResetSql(
           'p.traffic_reset',
           'p.reset_day',
           `CASE WHEN ${RUNNING} THEN COALESCE(users.subscription_started_at, users.subscription_on_hold_until) ELSE now() END`,
           'now()',
         )},
         subscription_expires_at = CASE
           WHEN ${onHold} THEN now() + make_interval(days => p.on_hold_max_days + p.duration_days)
           ELSE ${extended('p.duration_days')} END
       FROM plans p WHERE users.id = $1 AND p.name = $2
       RETURNING ${RECORD}`,
      [userId, planName],
    );
    return row;
  }

  /** Gives `days` to a referrer, on its own plan, or on `fallbackPlan` when it has none. */
  async giveDays(userId: string, days: number, fallbackPlan: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE users SET plan_name = COALESCE(plan_name, $3),
         ${startedIfNotRunning('COALESCE(users.plan_name, $3)')},
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
         ${startedIfNotRunning('$3')},
         traffic_used_bytes = CASE WHEN ${active} THEN traffic_used_bytes ELSE 0 END,
         subscription_expires_at = ${extended('$2')}
       WHERE id = $1 AND tg_id IS NOT NULL AND trial_used_at IS NULL
       RETURNING ${RECORD}`,
      [userId, days, planName],
    );
    return row ?? null;
  }

  /**
   * Moves the user's subscription end by `days` (negative: shortens it) from max(now, expiry),
   * never below now. A running subscription keeps its plan; otherwise it is `planName`, else the
   * plan it had, else `fallbackPlan`. One UPDATE: concurrent moves each apply once, in turn.
   */
  async moveEnd(
    userId: string,
    days: number,
    planName: string | null,
    fallbackPlan: string,
    holdDays: number | null = null,
  ): Promise<SubscriptionRecord | null> {
    // A grant that starts a subscription on first use (`holdDays` set) waits as a purchase does.
    const onHold = `(NOT ${RUNNING} AND $5::int IS NOT NULL)`;
    const [row] = await sqlRows<SubscriptionRecord>(
      this.txHost.tx,
      `UPDATE users SET
         plan_name = CASE WHEN plan_name IS NOT NULL AND subscription_expires_at > now()
                          THEN plan_name ELSE COALESCE($3, plan_name, $4) END,
         ${startedIfNotRunning('COALESCE($3, users.plan_name, $4)', '$5::int')},
         subscription_expires_at = CASE
           WHEN ${onHold} THEN now() + make_interval(days => $5::int + $2)
           ELSE GREATEST(now(), ${extended('$2')}) END
       WHERE id = $1
       RETURNING ${RECORD}`,
      [userId, days, planName, fallbackPlan, holdDays],
    );
    return row ?? null;
  }

  /** The user's current subscription; null when it has never had one. */
  async subscriptionOf(userId: string): Promise<SubscriptionRecord | null> {
    const [row] = await sqlRows<SubscriptionRecord>(
      this.txHost.tx,
      `SELECT ${RECORD} FROM users
       WHERE id = $1 AND plan_name IS NOT NULL AND subscription_expires_at IS NOT NULL`,
      [userId],
    );
    return row ?? null;
  }
}
