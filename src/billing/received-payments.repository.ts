import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';
import { type KeysetCursor, type KeysetOrder, keysetSql, positional } from '../common/pagination';
import type { InvoiceProvider } from './entities/invoice.entity';
import type { UnmatchedReason } from './entities/received-payment.entity';

/** An incoming transfer as read from the chain. */
export interface NewReceivedPayment {
  txRef: string;
  provider: InvoiceProvider;
  lt: bigint;
  sender: string | null;
  amount: bigint;
  currency: string;
  comment: string | null;
  receivedAt: Date;
}

export interface ReceivedPaymentRecord {
  id: string;
  txRef: string;
  provider: InvoiceProvider;
  lt: string | null;
  sender: string | null;
  amount: string;
  currency: string;
  comment: string | null;
  receivedAt: Date;
  settledAt: Date | null;
  reason: UnmatchedReason | null;
  invoiceId: string | null;
}

export interface ListedReceivedPayment extends ReceivedPaymentRecord {
  sortKey: string;
}

/** How far a provider's transactions have been read (see PaymentScan). */
export interface ScanState {
  doneLt: bigint | null;
  scanTopLt: bigint | null;
  scanLowLt: bigint | null;
}

const RECEIVED = `r.id, r.tx_ref AS "txRef", r.provider, r.lt, r.sender, r.amount, r.currency,
  r.comment, r.received_at AS "receivedAt", r.settled_at AS "settledAt", r.reason,
  r.invoice_id AS "invoiceId"`;

const NEWEST_FIRST: KeysetOrder = { at: 'r.received_at', id: 'r.id', direction: 'DESC' };

/** Reconciliation's batch of transfers to settle ($1 provider, $2 rows at most). */
export const UNSETTLED_SQL = `SELECT ${RECEIVED} FROM received_payments r
  WHERE r.provider = $1 AND r.settled_at IS NULL ORDER BY r.lt LIMIT $2`;

/** A page of the staff's unmatched list. */
export function unmatchedPageQuery(
  after: KeysetCursor | null,
  limit: number,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [limit];
  const keyset = keysetSql(NEWEST_FIRST, after, positional(params));
  return {
    sql: `SELECT ${RECEIVED}, ${keyset.selectSortKey} FROM received_payments r
      WHERE r.reason IS NOT NULL AND r.invoice_id IS NULL AND ${keyset.after}
      ORDER BY ${keyset.orderBy} LIMIT $1`,
    params,
  };
}

const bigintOrNull = (value: string | null): bigint | null =>
  value === null ? null : BigInt(value);

/** The owner of `received_payments` and `payment_scans`. */
@Injectable()
export class ReceivedPaymentsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Stores each transfer once; one already stored (a page read again) is left as it is. */
  async insertMany(payments: readonly NewReceivedPayment[]): Promise<void> {
    if (payments.length === 0) return;
    await this.txHost.tx.query(
      `INSERT INTO received_payments
         (tx_ref, provider, lt, sender, amount, currency, comment, memo_key, received_at)
       SELECT p.tx_ref, p.provider, p.lt, p.sender, p.amount, p.currency, p.comment,
              lower(btrim(p.comment)), p.received_at
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[],
                   $7::text[], $8::timestamptz[])
         AS p(tx_ref, provider, lt, sender, amount, currency, comment, received_at)
       ON CONFLICT (tx_ref) DO NOTHING`,
      [
        payments.map((p) => p.txRef),
        payments.map((p) => p.provider),
        payments.map((p) => p.lt.toString()),
        payments.map((p) => p.sender),
        payments.map((p) => p.amount.toString()),
        payments.map((p) => p.currency),
        payments.map((p) => p.comment),
        payments.map((p) => p.receivedAt.toISOString()),
      ],
    );
  }

  /** Not yet settled, oldest first, at most `limit`. */
  unsettled(provider: InvoiceProvider, limit: number): Promise<ReceivedPaymentRecord[]> {
    return sqlRows<ReceivedPaymentRecord>(this.txHost.tx, UNSETTLED_SQL, [provider, limit]);
  }

  /**
   * Not yet settled transfers whose comment is `memoKey` (trimmed, lower-case) that paid no
   * invoice yet, oldest first.
   */
  unsettledFor(provider: InvoiceProvider, memoKey: string): Promise<ReceivedPaymentRecord[]> {
    return sqlRows<ReceivedPaymentRecord>(
      this.txHost.tx,
      `SELECT ${RECEIVED} FROM received_payments r
       WHERE r.provider = $1 AND r.settled_at IS NULL AND r.memo_key = $2
         AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.provider_tx_ref = r.tx_ref)
       ORDER BY r.lt`,
      [provider, memoKey],
    );
  }

  /** Settles a transfer: the invoice it paid, or why it paid none. Once. */
  async settle(txRef: string, outcome: { invoiceId: string } | { reason: UnmatchedReason }) {
    await this.txHost.tx.query(
      `UPDATE received_payments SET settled_at = now(), invoice_id = $2, reason = $3
       WHERE tx_ref = $1 AND settled_at IS NULL`,
      [
        txRef,
        'invoiceId' in outcome ? outcome.invoiceId : null,
        'reason' in outcome ? outcome.reason : null,
      ],
    );
  }

  /** Unmatched and not attached to any invoice, newest first. */
  unmatchedPage(after: KeysetCursor | null, limit: number): Promise<ListedReceivedPayment[]> {
    const { sql, params } = unmatchedPageQuery(after, limit);
    return sqlRows<ListedReceivedPayment>(this.txHost.tx, sql, params);
  }

  /** The unmatched, unattached transfer, locked until the transaction ends; null otherwise. */
  async lockUnmatched(txRef: string): Promise<ReceivedPaymentRecord | null> {
    const [row] = await sqlRows<ReceivedPaymentRecord>(
      this.txHost.tx,
      `SELECT ${RECEIVED} FROM received_payments r
       WHERE r.tx_ref = $1 AND r.reason IS NOT NULL AND r.invoice_id IS NULL FOR UPDATE`,
      [txRef],
    );
    return row ?? null;
  }

  async markAttached(txRef: string, invoiceId: string): Promise<void> {
    await this.txHost.tx.query(`UPDATE received_payments SET invoice_id = $2 WHERE tx_ref = $1`, [
      txRef,
      invoiceId,
    ]);
  }

  // Scan position

  async scanState(provider: InvoiceProvider): Promise<ScanState> {
    const [row] = await sqlRows<{
      doneLt: string | null;
      scanTopLt: string | null;
      scanLowLt: string | null;
    }>(
      this.txHost.tx,
      `SELECT done_lt AS "doneLt", scan_top_lt AS "scanTopLt", scan_low_lt AS "scanLowLt"
       FROM payment_scans WHERE provider = $1`,
      [provider],
    );
    return {
      doneLt: bigintOrNull(row?.doneLt ?? null),
      scanTopLt: bigintOrNull(row?.scanTopLt ?? null),
      scanLowLt: bigintOrNull(row?.scanLowLt ?? null),
    };
  }

  async saveScanState(provider: InvoiceProvider, state: ScanState): Promise<void> {
    const text = (value: bigint | null) => (value === null ? null : value.toString());
    await this.txHost.tx.query(
      `INSERT INTO payment_scans (provider, done_lt, scan_top_lt, scan_low_lt)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (provider) DO UPDATE SET done_lt = $2, scan_top_lt = $3, scan_low_lt = $4,
         updated_at = now()`,
      [provider, text(state.doneLt), text(state.scanTopLt), text(state.scanLowLt)],
    );
  }
}
