import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { isUniqueViolation } from '../database/postgres-errors';
import { sqlRows } from '../database/sql';
import { TxRefUsedCondition } from './billing.errors';
import { INVOICE, type InvoiceRecord } from './billing.repository';

export interface SubscriptionRecord {
  planName: string;
  expiresAt: Date;
}

/** Who gets something when this buyer pays. */
export interface BuyerLinks {
  referrerId: string | null;
  partnerId: string | null;
}

export interface NewCommission {
  partnerId: string;
  buyerId: string;
  invoiceId: string;
  planName: string;
  currency: string;
  priceMinor: bigint;
  percent: string;
  amountMinor: bigint;
}

/** `expires_at` moved on by some days from whichever is later: now, or the current expiry. */
const extended = (days: string): string =>
  `GREATEST(now(), COALESCE(subscription_expires_at, now())) + make_interval(days => ${days})`;

/**
 * The queries that move money and subscriptions: paying an invoice, extending subscriptions,
 * the referral reward, the partner commission and the trial. The `tx` ones run inside the caller's
 * transaction.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async buyerLinks(tx: EntityManager, userId: string): Promise<BuyerLinks | null> {
    const [row] = await sqlRows<BuyerLinks>(
      tx,
      `SELECT referred_by_user_id AS "referrerId", referred_by_partner_id AS "partnerId"
       FROM users WHERE id = $1`,
      [userId],
    );
    return row ?? null;
  }

  /**
   * Locks these users' rows until the transaction ends, always in id order so that two
   * confirmations locking the same pair cannot deadlock.
   */
  async lockUsers(tx: EntityManager, ids: string[]): Promise<void> {
    await tx.query(
      `SELECT id FROM users WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [ids],
    );
  }

  /**
   * Moves the invoice to `paid` with the transaction that paid it, if it is still payable: pending,
   * or expired less than `lateDays` after it was made. Null when it is not (already paid, or too
   * late). `TxRefUsedCondition` when that transaction already paid another invoice.
   */
  async markPaid(
    tx: EntityManager,
    invoiceId: string,
    userId: string,
    txRef: string,
    lateDays: number,
  ): Promise<InvoiceRecord | null> {
    try {
      const [paid] = await sqlRows<InvoiceRecord>(
        tx,
        `UPDATE invoices i SET status = 'paid', paid_at = now(), provider_tx_ref = $3
         WHERE i.id = $1 AND i.user_id = $2 AND (i.status = 'pending'
           OR (i.status = 'expired' AND i.created_at > now() - make_interval(days => $4)))
         RETURNING ${INVOICE}`,
        [invoiceId, userId, txRef, lateDays],
      );
      return paid ?? null;
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_invoices_provider_tx_ref')) {
        throw new TxRefUsedCondition(txRef);
      }
      throw error;
    }
  }

  /** The buyer's subscription: the plan's days from max(now, expiry), that plan, traffic reset. */
  async extendForPlan(
    tx: EntityManager,
    userId: string,
    planName: string,
  ): Promise<SubscriptionRecord> {
    const [row] = await sqlRows<SubscriptionRecord>(
      tx,
      `UPDATE users SET plan_name = p.name, traffic_used_bytes = 0,
         subscription_expires_at = ${extended('p.duration_days')}
       FROM plans p WHERE users.id = $1 AND p.name = $2
       RETURNING users.plan_name AS "planName", users.subscription_expires_at AS "expiresAt"`,
      [userId, planName],
    );
    return row;
  }

  async paidInvoiceCount(tx: EntityManager, userId: string): Promise<number> {
    const [row] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM invoices WHERE user_id = $1 AND status = 'paid'`,
      [userId],
    );
    return row.n;
  }

  /** Gives `days` to a referrer, on its own plan, or on `fallbackPlan` when it has none. */
  async giveDays(
    tx: EntityManager,
    userId: string,
    days: number,
    fallbackPlan: string,
  ): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      tx,
      `UPDATE users SET plan_name = COALESCE(plan_name, $3),
         subscription_expires_at = ${extended('$2')}
       WHERE id = $1 RETURNING id`,
      [userId, days, fallbackPlan],
    );
    return rows.length > 0;
  }

  /** The plan's price in that currency now, in minor units; null when it has none. */
  async planPrice(tx: EntityManager, planName: string, currency: string): Promise<string | null> {
    const [row] = await sqlRows<{ amount: string }>(
      tx,
      `SELECT amount_minor AS amount FROM plan_prices WHERE plan_name = $1 AND currency = $2`,
      [planName, currency],
    );
    return row?.amount ?? null;
  }

  /** The partner's commission rate (numeric(5,2) text); null when it has none. */
  async commissionPercent(tx: EntityManager, partnerId: string): Promise<string | null> {
    const [row] = await sqlRows<{ percent: string | null }>(
      tx,
      `SELECT commission_percent AS percent FROM users WHERE id = $1`,
      [partnerId],
    );
    return row?.percent ?? null;
  }

  /** One commission per invoice: a second insert for the same invoice changes nothing. */
  async insertCommission(tx: EntityManager, c: NewCommission): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      tx,
      `INSERT INTO partner_commissions
         (partner_id, buyer_id, invoice_id, plan_name, currency, price_minor, percent, amount_minor)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (invoice_id) DO NOTHING RETURNING id`,
      [
        c.partnerId,
        c.buyerId,
        c.invoiceId,
        c.planName,
        c.currency,
        c.priceMinor.toString(),
        c.percent,
        c.amountMinor.toString(),
      ],
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
      this.dataSource,
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

  /** Why a trial was refused: whether the account is a Telegram one (null: no such user). */
  async isTelegramAccount(userId: string): Promise<boolean | null> {
    const [row] = await sqlRows<{ telegram: boolean }>(
      this.dataSource,
      `SELECT tg_id IS NOT NULL AS telegram FROM users WHERE id = $1`,
      [userId],
    );
    return row ? row.telegram : null;
  }

  async userIdByTgId(tgId: string): Promise<string | null> {
    const [row] = await sqlRows<{ id: string }>(
      this.dataSource,
      `SELECT id FROM users WHERE tg_id = $1`,
      [tgId],
    );
    return row?.id ?? null;
  }

  /** The user's current subscription; null when it has never had one. */
  async subscriptionOf(userId: string): Promise<SubscriptionRecord | null> {
    const [row] = await sqlRows<SubscriptionRecord>(
      this.dataSource,
      `SELECT plan_name AS "planName", subscription_expires_at AS "expiresAt" FROM users
       WHERE id = $1 AND plan_name IS NOT NULL AND subscription_expires_at IS NOT NULL`,
      [userId],
    );
    return row ?? null;
  }
}
