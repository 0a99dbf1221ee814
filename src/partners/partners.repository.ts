import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { type KeysetCursor, type KeysetRow, keysetSql, positional } from '../common/pagination';
import { sqlRows } from '../database/sql';
import type { WithdrawalState } from './entities/withdrawal-request.entity';

/** A partner's totals in one currency, in minor units (digits). */
export interface BalanceTotals {
  currency: string;
  earned: string;
  /** Pending and approved withdrawals. */
  requested: string;
  paid: string;
}

export interface CommissionRecord {
  id: string;
  invoiceId: string;
  buyerId: string;
  planName: string;
  currency: string;
  priceMinor: string;
  percent: string;
  amountMinor: string;
  createdAt: Date;
}

export interface WithdrawalRecord {
  id: string;
  partnerId: string;
  amount: string;
  currency: string;
  destination: string;
  status: WithdrawalState;
  reason: string | null;
  txRef: string | null;
  decidedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewWithdrawal {
  partnerId: string;
  amount: bigint;
  currency: string;
  destination: string;
}

/** A state move of a withdrawal, with who made it and what they said. */
export interface WithdrawalMove {
  to: WithdrawalState;
  decidedBy: string;
  reason?: string;
  txRef?: string | null;
}

export interface WithdrawalFilter {
  partnerId?: string;
  status?: WithdrawalState;
}

const COMMISSION = `c.id, c.invoice_id AS "invoiceId", c.buyer_id AS "buyerId",
  c.plan_name AS "planName", c.currency, c.price_minor AS "priceMinor", c.percent,
  c.amount_minor AS "amountMinor", c.created_at AS "createdAt"`;

const WITHDRAWAL = `w.id, w.partner_id AS "partnerId", w.amount, w.currency, w.destination,
  w.status, w.reason, w.tx_ref AS "txRef", w.decided_by AS "decidedBy",
  w.created_at AS "createdAt", w.updated_at AS "updatedAt"`;

/**
 * Every query on `withdrawal_requests`, and the partner's reads of `partner_commissions` (billing
 * writes those when an attached buyer pays).
 */
@Injectable()
export class PartnersRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * The partner's totals per currency that has a commission or a withdrawal; one currency only
   * when `currency` is given. Run inside the transaction that holds the partner's lock, it is
   * the balance a new withdrawal is checked against.
   */
  balances(partnerId: string, currency?: string): Promise<BalanceTotals[]> {
    return sqlRows<BalanceTotals>(
      this.txHost.tx,
      `WITH earned AS (
         SELECT currency, sum(amount_minor) AS earned FROM partner_commissions
         WHERE partner_id = $1 AND ($2::text IS NULL OR currency = $2) GROUP BY currency
       ), withdrawn AS (
         SELECT currency,
           sum(amount) FILTER (WHERE status IN ('pending', 'approved')) AS requested,
           sum(amount) FILTER (WHERE status = 'paid') AS paid
         FROM withdrawal_requests
         WHERE partner_id = $1 AND ($2::text IS NULL OR currency = $2) GROUP BY currency
       )
       SELECT currency, COALESCE(e.earned, 0)::text AS earned,
         COALESCE(w.requested, 0)::text AS requested, COALESCE(w.paid, 0)::text AS paid
       FROM earned e FULL JOIN withdrawn w USING (currency)
       ORDER BY currency`,
      [partnerId, currency ?? null],
    );
  }

  /** The partner's commissions, newest first. */
  commissionsPage(
    partnerId: string,
    after: KeysetCursor | null,
    limit: number,
  ): Promise<(CommissionRecord & KeysetRow)[]> {
    const params: unknown[] = [partnerId, limit];
    const keyset = keysetSql(
      { at: 'c.created_at', id: 'c.id', direction: 'DESC' },
      after,
      positional(params),
    );
    return sqlRows<CommissionRecord & KeysetRow>(
      this.txHost.tx,
      `SELECT ${COMMISSION}, ${keyset.selectSortKey} FROM partner_commissions c
       WHERE c.partner_id = $1 AND ${keyset.after}
       ORDER BY ${keyset.orderBy} LIMIT $2`,
      params,
    );
  }

  async insertWithdrawal(withdrawal: NewWithdrawal): Promise<WithdrawalRecord> {
    const [row] = await sqlRows<WithdrawalRecord>(
      this.txHost.tx,
      `INSERT INTO withdrawal_requests AS w (partner_id, amount, currency, destination)
       VALUES ($1, $2, $3, $4) RETURNING ${WITHDRAWAL}`,
      [
        withdrawal.partnerId,
        withdrawal.amount.toString(),
        withdrawal.currency,
        withdrawal.destination,
      ],
    );
    return row;
  }

  /** Withdrawals newest first, of one partner or all, of one status or all. */
  withdrawalsPage(
    filter: WithdrawalFilter,
    after: KeysetCursor | null,
    limit: number,
  ): Promise<(WithdrawalRecord & KeysetRow)[]> {
    const params: unknown[] = [limit, filter.partnerId ?? null, filter.status ?? null];
    const keyset = keysetSql(
      { at: 'w.created_at', id: 'w.id', direction: 'DESC' },
      after,
      positional(params),
    );
    return sqlRows<WithdrawalRecord & KeysetRow>(
      this.txHost.tx,
      `SELECT ${WITHDRAWAL}, ${keyset.selectSortKey} FROM withdrawal_requests w
       WHERE ($2::uuid IS NULL OR w.partner_id = $2) AND ($3::text IS NULL OR w.status = $3)
         AND ${keyset.after}
       ORDER BY ${keyset.orderBy} LIMIT $1`,
      params,
    );
  }

  /** Locks the withdrawal until the transaction ends; null when there is none with that id. */
  async lockWithdrawal(id: string): Promise<WithdrawalRecord | null> {
    const [row] = await sqlRows<WithdrawalRecord>(
      this.txHost.tx,
      `SELECT ${WITHDRAWAL} FROM withdrawal_requests w WHERE w.id = $1 FOR UPDATE`,
      [id],
    );
    return row ?? null;
  }

  /**
   * Moves the withdrawal to `move.to` if it is still in one of `from`: a conditional update, so
   * of two racing moves only one applies. Null when it was not in `from`.
   */
  async moveWithdrawal(
    id: string,
    from: readonly WithdrawalState[],
    move: WithdrawalMove,
  ): Promise<WithdrawalRecord | null> {
    const [row] = await sqlRows<WithdrawalRecord>(
      this.txHost.tx,
      `UPDATE withdrawal_requests w SET status = $3, decided_by = $4,
         reason = COALESCE($5, w.reason), tx_ref = COALESCE($6, w.tx_ref), updated_at = now()
       WHERE w.id = $1 AND w.status = ANY($2::text[]) RETURNING ${WITHDRAWAL}`,
      [id, from, move.to, move.decidedBy, move.reason ?? null, move.txRef ?? null],
    );
    return row ?? null;
  }
}
