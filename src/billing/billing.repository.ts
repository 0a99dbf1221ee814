import { isUUID } from 'class-validator';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { isUniqueViolation } from '../database/postgres-errors';
import { sqlRows } from '../database/sql';
import { CommentTakenCondition } from './billing.errors';
import type { InvoiceProvider, InvoiceStatus } from './entities/invoice.entity';
import type { KeysetCursor } from '../common/pagination';

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

const SORT_KEY = `to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "sortKey"`;

/** Every query on `invoices` and `telegram_payments`. */
@Injectable()
export class BillingRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * Runs `work` while holding a transaction-scoped advisory lock on a connection of its own;
   * null, without running it, when another instance holds the lock.
   */
  withAdvisoryLock<T>(key: number, work: () => Promise<T>): Promise<T | null> {
    return this.dataSource.transaction(async (tx) => {
      const [row] = await sqlRows<{ locked: boolean }>(
        tx,
        `SELECT pg_try_advisory_xact_lock($1) AS locked`,
        [key],
      );
      return row.locked ? work() : null;
    });
  }

  // Invoices

  /**
   * Locks the user's row until the transaction ends: one user's invoice creations run one after
   * another, so a count of its pending invoices stays true until the insert. False: no such user.
   */
  async lockUser(tx: EntityManager, userId: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      tx,
      `SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE`,
      [userId],
    );
    return rows.length > 0;
  }

  /** The user's invoices still waiting for a payment (pending and not past their expiry). */
  async pendingInvoiceCount(
    userId: string,
    runner: DataSource | EntityManager = this.dataSource,
  ): Promise<number> {
    const [row] = await sqlRows<{ n: number }>(
      runner,
      `SELECT count(*)::int AS n FROM invoices
       WHERE user_id = $1 AND status = 'pending' AND expires_at > now()`,
      [userId],
    );
    return row.n;
  }

  async insertInvoice(
    invoice: NewInvoice,
    runner: DataSource | EntityManager = this.dataSource,
  ): Promise<InvoiceRecord> {
    try {
      const [inserted] = await sqlRows<InvoiceRecord>(
        runner,
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

  async findInvoice(
    id: string,
    runner: DataSource | EntityManager = this.dataSource,
  ): Promise<InvoiceRecord | null> {
    const [invoice] = await sqlRows<InvoiceRecord>(
      runner,
      `SELECT ${INVOICE} FROM invoices i WHERE i.id = $1`,
      [id],
    );
    return invoice ?? null;
  }

  /** Invoices newest first, optionally of one user or in one status. */
  page(filter: InvoiceFilter, after: KeysetCursor | null, limit: number): Promise<ListedInvoice[]> {
    const params: unknown[] = [limit, filter.userId ?? null, filter.status ?? null];
    let position = '';
    if (after) {
      params.push(after.at, after.id);
      position = `AND (i.created_at, i.id) < ($4::timestamptz, $5::uuid)`;
    }
    return sqlRows<ListedInvoice>(
      this.dataSource,
      `SELECT ${INVOICE}, ${SORT_KEY} FROM invoices i
       WHERE ($2::uuid IS NULL OR i.user_id = $2) AND ($3::text IS NULL OR i.status = $3) ${position}
       ORDER BY i.created_at DESC, i.id DESC LIMIT $1`,
      params,
    );
  }

  /** Marks pending invoices past their expiry `expired`; how many. */
  async expireStale(): Promise<number> {
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `UPDATE invoices SET status = 'expired'
       WHERE status = 'pending' AND expires_at <= now() RETURNING id`,
    );
    return rows.length;
  }

  /** A provider's invoices that a payment may still confirm, oldest first. */
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
      this.dataSource,
      `SELECT ${INVOICE} FROM invoices i
       WHERE i.provider = $1 AND i.status <> 'paid'
         AND (i.status = 'pending' OR i.created_at > now() - make_interval(days => $2))
         AND (i.comment = ANY($3::text[]) OR i.id = ANY($4::uuid[]))
       ORDER BY i.created_at, i.id`,
      [provider, lateDays, keys, keys.filter((key) => isUUID(key))],
    );
  }

  // Telegram payments

  /** Records a Telegram charge once; a repeated delivery of the same charge changes nothing. */
  async recordTelegramPayment(payment: TelegramPaymentRecord): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO telegram_payments
         (telegram_payment_charge_id, invoice_id, tg_id, currency, total_amount)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (telegram_payment_charge_id) DO NOTHING`,
      [payment.chargeId, payment.invoiceId, payment.tgId, payment.currency, payment.totalAmount],
    );
  }

  telegramPaymentsFor(invoiceId: string): Promise<TelegramPaymentRecord[]> {
    return sqlRows<TelegramPaymentRecord>(
      this.dataSource,
      `SELECT ${TELEGRAM_PAYMENT} FROM telegram_payments tp WHERE tp.invoice_id = $1
       ORDER BY tp.created_at`,
      [invoiceId],
    );
  }

  recentTelegramPayments(days: number): Promise<TelegramPaymentRecord[]> {
    return sqlRows<TelegramPaymentRecord>(
      this.dataSource,
      `SELECT ${TELEGRAM_PAYMENT} FROM telegram_payments tp
       WHERE tp.created_at > now() - make_interval(days => $1) ORDER BY tp.created_at`,
      [days],
    );
  }
}
