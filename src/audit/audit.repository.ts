import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';
import { type KeysetCursor, keysetSql, positional } from '../common/pagination';

export interface NewAuditEntry {
  /** The staff member who acted; null for the system itself. */
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  before: unknown;
  after: unknown;
}

export interface AuditRow {
  id: string;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  before: unknown;
  after: unknown;
  created_at: Date;
  sortKey: string;
}

/** The owner of `audit_log`. */
@Injectable()
export class AuditRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async insert(entry: NewAuditEntry): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO audit_log (actor_id, action, target_type, target_id, before, after)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)`,
      [
        entry.actorId,
        entry.action,
        entry.targetType,
        entry.targetId,
        entry.before === undefined || entry.before === null ? null : JSON.stringify(entry.before),
        entry.after === undefined || entry.after === null ? null : JSON.stringify(entry.after),
      ],
    );
  }

  /** Newest first; `limit` rows after `after` (exclusive). */
  page(limit: number, after: KeysetCursor | null): Promise<AuditRow[]> {
    const params: unknown[] = [limit];
    const keyset = keysetSql(
      { at: 'a.created_at', id: 'a.id', direction: 'DESC' },
      after,
      positional(params),
    );
    return sqlRows<AuditRow>(
      this.txHost.tx,
      `SELECT a.id, a.actor_id, a.action, a.target_type, a.target_id, a.before, a.after,
              a.created_at, ${keyset.selectSortKey}
         FROM audit_log a WHERE ${keyset.after}
        ORDER BY ${keyset.orderBy}
        LIMIT $1`,
      params,
    );
  }
}
