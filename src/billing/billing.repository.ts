import { isUUID } from 'class-validator';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isUniqueViolation } from '../database/postgres-errors';
import { sqlRows } from '../database/sql';
import { CommentTakenCondition, TxRefUsedCondition } from './billing.errors';
import type { InvoiceProvider, InvoiceStatus } from './entities/invoice.entity';
import { type KeysetCursor, type KeysetOrder, keysetSql, positional } from '../common/pagination';

export interface InvoiceRecord {
  id: string;
  userId: string;
  planName: string;
  currency: string;
  amount: string;
  provider: InvoiceProvider;
  status: InvoiceStatus;
  payment: Record<string, unknown>;
  comment: string | null;
  providerTxRef: string | null;
  createdAt: Date;
  paidAt: Date | null;
  expiresAt: Date;
}

/** An invoice in a list, with its exact sort key for the next page's cursor. */
export interface ListedInvoice extends InvoiceRecord {
  sortKey: string;
}

export interface NewInvoice {
  id: string;
  userId: string;
  planName: string;
  currency: string;
  amount: bigint;
  provider: InvoiceProvider;
  payment: Record<string, unknown>;
  comment: string | null;
  ttlHours: number;
}

export interface InvoiceFilter {
  status?: InvoiceStatus;
  userId?: string;
}

export interface TelegramPaymentRecord {
  chargeId: string;
  invoiceId: string;
  tgId: string;
  currency: string;
  totalAmount: string;
}

export const INVOICE = `i.id, i.user_id AS "userId", i.plan_name AS "planName", i.currency,
  i.amount, i.provider, i.status, i.payment, i.comment, i.provider_tx_ref AS "providerTxRef",
  i.created_at AS "createdAt", i.paid_at AS "paidAt", i.expires_at AS "expiresAt"`;

const TELEGRAM_PAYMENT = `tp.telegram_payment_charge_id AS "chargeId", tp.invoice_id AS "invoiceId",
  tp.tg_id AS "tgId", tp.currency, tp.total_amount AS "totalAmount"`;

const NEWEST_FIRST: KeysetOrder = { at: 'i.created_at', id: 'i.id', direction: 'DESC' };

// The statements that run often or over growing tables, exported so their plans can be checked.

/** The expiry job: through IDX_invoices_pending_expiry, never over every expired invoice. */
export const EXPIRE_STALE_SQL = `UPDATE invoices SET status = 'expired'
  WHERE status = 'pending' AND expires_at <= now() RETURNING id`;

/** Reconciliation's Telegram charges ($1 days, $2 rows at most). */
export const RECENT_TELEGRAM_PAYMENTS_SQL = `SELECT ${TELEGRAM_PAYMENT} FROM telegram_payments tp
  JOIN invoices i ON i.id = tp.invoice_id AND i.status <> 'paid'
  WHERE tp.created_at > now() - make_interval(days => $1) ORDER BY tp.created_at LIMIT $2`;

/** A page of invoices newest first (the user's own list and the staff list). */
export function invoicePageQuery(
  filter: InvoiceFilter,
  after: KeysetCursor | null,
  limit: number,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [limit, filter.userId ?? null, filter.status ?? null];
  const keyset = keysetSql(NEWEST_FIRST, after, positional(params));
  // Each filter is spelled out only when given, so the planner picks the index that fits it.
  const where = [
    filter.userId ? 'i.user_id = $2' : '$2::uuid IS NULL',
    filter.status ? 'i.status = $3' : '$3::text IS NULL',
    keyset.after,
  ].join(' AND ');
  return {
    sql: `SELECT ${INVOICE}, ${keyset.selectSortKey} FROM invoices i WHERE ${where}
      ORDER BY ${keyset.orderBy} LIMIT $1`,
    params,
  };
}

/** The owner of `invoices` and `telegram_payments`. */
@Injectable()
export class BillingRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** The user's invoices still waiting for a payment (pending and not past their expiry). */
  async pendingInvoiceCount(userId: string): Promise<number> {
    const [row] = await sqlRows<{ n: number }>(
      this.txHost.tx,
      `SELECT count(*)::int AS n FROM invoices
       WHERE user_id = $1 AND status = 'pending' AND expires_at > now()`,
      [userId],
    );
    return row.n;
  }

  /**
   * The user's newest pending invoice for this plan, currency and provider with at least
   * `minLeftMinutes` before it expires: what a repeated order of the same thing is given again.
   */
  async reusableInvoice(
    order: { userId: string; planName: string; currency: string; provider: InvoiceProvider },
    minLeftMinutes: number,
  ): Promise<InvoiceRecord | null> {
    const [invoice] = await sqlRows<InvoiceRecord>(
      this.txHost.tx,
      `SELECT ${INVOICE} FROM invoices i
       WHERE i.user_id = $1 AND i.plan_name = $2 AND i.currency = $3 AND i.provider = $4
         AND i.status = 'pending' AND i.expires_at > now() + make_interval(mins => $5)
       ORDER BY i.created_at DESC LIMIT 1`,
      [order.userId, order.planName, order.currency, order.provider, minLeftMinutes],
    );
    return invoice ?? null;
  }

  async insertInvoice(invoice: NewInvoice): Promise<InvoiceRecord> {
    try {
      const [inserted] = await sqlRows<InvoiceRecord>(
        this.txHost.tx,
        `INSERT INTO invoices AS i
           (id, user_id, plan_name, currency, amount, provider, payment, comment, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(hours => $9))
         RETURNING ${INVOICE}`,
        [
          invoice.id,
          invoice.userId,
          invoice.planName,
          invoice.currency,
          invoice.amount.toString(),
          invoice.provider,
          invoice.payment,
          invoice.comment,
          invoice.ttlHours,
        ],
      );
      return inserted;
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_invoices_comment')) throw new CommentTakenCondition();
      throw error;
    }
  }

  async findInvoice(id: string): Promise<InvoiceRecord | null> {
    const [invoice] = await sqlRows<InvoiceRecord>(
      this.txHost.tx,
      `SELECT ${INVOICE} FROM invoices i WHERE i.id = $1`,
      [id],
    );
    return invoice ?? null;
  }

  /** Invoices newest first, optionally of one user or in one status. */
  page(filter: InvoiceFilter, after: KeysetCursor | null, limit: number): Promise<ListedInvoice[]> {
    const { sql, params } = invoicePageQuery(filter, after, limit);
    return sqlRows<ListedInvoice>(this.txHost.tx, sql, params);
  }

  /** Marks pending invoices past their expiry `expired`; how many. */
  async expireStale(): Promise<number> {
    const rows = await sqlRows<{ id: string }>(this.txHost.tx, EXPIRE_STALE_SQL);
    return rows.length;
  }

  /**
   * The unpaid invoices that transactions with these memos could pay: a TON invoice by its comment
   * (generated lower-case, so memos are compared trimmed and lower-cased, through the comment's
   * index), a Telegram invoice by its id. Expired ones count for `lateDays`.
   */
  payableInvoices(
    provider: InvoiceProvider,
    lateDays: number,
    memos: readonly string[],
  ): Promise<InvoiceRecord[]> {
    const keys = memos.map((memo) => memo.trim().toLowerCase());
    return sqlRows<InvoiceRecord>(
      this.txHost.tx,
      `SELECT ${INVOICE} FROM invoices i
       WHERE i.provider = $1 AND i.status <> 'paid'
         AND (i.status = 'pending' OR i.created_at > now() - make_interval(days => $2))
         AND (i.comment = ANY($3::text[]) OR i.id = ANY($4::uuid[]))
       ORDER BY i.created_at, i.id`,
      [provider, lateDays, keys, keys.filter((key) => isUUID(key))],
    );
  }

  /** The TON invoices carrying these comments (matched trimmed, lower-case), in any status. */
  invoicesByComment(memos: readonly string[]): Promise<InvoiceRecord[]> {
    return sqlRows<InvoiceRecord>(
      this.txHost.tx,
      `SELECT ${INVOICE} FROM invoices i WHERE i.comment = ANY($1::text[])`,
      [memos.map((memo) => memo.trim().toLowerCase())],
    );
  }

  /**
   * Moves the invoice to `paid` with the transaction that paid it, if it is still payable: pending,
   * or expired less than `lateDays` after it was made (null: any age). Null when it is not (already
   * paid, or too late). `TxRefUsedCondition` when that transaction already paid another invoice.
   */
  async markPaid(
    invoiceId: string,
    userId: string,
    txRef: string,
    lateDays: number | null,
  ): Promise<InvoiceRecord | null> {
    try {
      const [paid] = await sqlRows<InvoiceRecord>(
        this.txHost.tx,
        `UPDATE invoices i SET status = 'paid', paid_at = now(), provider_tx_ref = $3
         WHERE i.id = $1 AND i.user_id = $2 AND (i.status = 'pending'
           OR (i.status = 'expired'
             AND ($4::int IS NULL OR i.created_at > now() - make_interval(days => $4))))
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

  async paidInvoiceCount(userId: string): Promise<number> {
    const [row] = await sqlRows<{ n: number }>(
      this.txHost.tx,
      `SELECT count(*)::int AS n FROM invoices WHERE user_id = $1 AND status = 'paid'`,
      [userId],
    );
    return row.n;
  }

  // Telegram payments

  /** Records a Telegram charge once; a repeated delivery of the same charge changes nothing. */
  async recordTelegramPayment(payment: TelegramPaymentRecord): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO telegram_payments
         (telegram_payment_charge_id, invoice_id, tg_id, currency, total_amount)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (telegram_payment_charge_id) DO NOTHING`,
      [payment.chargeId, payment.invoiceId, payment.tgId, payment.currency, payment.totalAmount],
    );
  }

  telegramPaymentsFor(invoiceId: string): Promise<TelegramPaymentRecord[]> {
    return sqlRows<TelegramPaymentRecord>(
      this.txHost.tx,
      `SELECT ${TELEGRAM_PAYMENT} FROM telegram_payments tp WHERE tp.invoice_id = $1
       ORDER BY tp.created_at`,
      [invoiceId],
    );
  }

  /**
   * The recent charges whose invoice is not paid yet (the only ones reconciliation can still
   * credit), oldest first, at most `limit`.
   */
  recentTelegramPayments(days: number, limit: number): Promise<TelegramPaymentRecord[]> {
    return sqlRows<TelegramPaymentRecord>(this.txHost.tx, RECENT_TELEGRAM_PAYMENTS_SQL, [
      days,
      limit,
    ]);
  }

  /**
   * Marks a charge as one that arrived for an invoice another charge had paid: it is not credited.
   * Then claims its refund once: true for the one caller that should ask Telegram to refund it.
   */
  async claimDuplicateRefund(chargeId: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE telegram_payments SET duplicate_at = COALESCE(duplicate_at, now()), refunded_at = now()
       WHERE telegram_payment_charge_id = $1 AND refunded_at IS NULL
       RETURNING telegram_payment_charge_id AS id`,
      [chargeId],
    );
    return rows.length > 0;
  }

  /** The refund did not go through: leave the charge for staff (or the next delivery) to refund. */
  async releaseDuplicateRefund(chargeId: string): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE telegram_payments SET refunded_at = NULL WHERE telegram_payment_charge_id = $1`,
      [chargeId],
    );
  }

  /** Marks a charge as not credited, for staff to refund by hand (no Bot API refund exists). */
  async markDuplicateCharge(chargeId: string): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE telegram_payments SET duplicate_at = COALESCE(duplicate_at, now())
       WHERE telegram_payment_charge_id = $1`,
      [chargeId],
    );
  }
}
