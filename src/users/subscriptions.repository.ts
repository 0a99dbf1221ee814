import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';

/** A subscription, kept in the user's own columns. */
export interface SubscriptionRecord {
  planName: string;
  expiresAt: Date;
}

/** `expires_at` moved on by some days from whichever is later: now, or the current expiry. */
const extended = (days: string): string =>
  `GREATEST(now(), COALESCE(subscription_expires_at, now())) + make_interval(days => ${days})`;

/**
 * Subscriptions, kept in the user's own columns (`plan_name`, `subscription_expires_at`, the trial):
 * every statement that starts or moves one. Each is one conditional UPDATE, so concurrent callers
 * each apply once. Statements run in the caller's transaction, when there is one.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

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
  ): Promise<SubscriptionRecord | null> {
    const [row] = await sqlRows<SubscriptionRecord>(
      this.txHost.tx,
      `UPDATE users SET
         plan_name = CASE WHEN plan_name IS NOT NULL AND subscription_expires_at > now()
                          THEN plan_name ELSE COALESCE($3, plan_name, $4) END,
         subscription_expires_at = GREATEST(now(), ${extended('$2')})
       WHERE id = $1
       RETURNING plan_name AS "planName", subscription_expires_at AS "expiresAt"`,
      [userId, days, planName, fallbackPlan],
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
}
