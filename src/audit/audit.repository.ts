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

/** What a listing is narrowed to: each given field must match exactly. */
export interface AuditFilter {
  action?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
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

  /** Newest first; `limit` rows matching `filter` after `after` (exclusive). */
  page(filter: AuditFilter, limit: number, after: KeysetCursor | null): Promise<AuditRow[]> {
    const params: unknown[] = [limit];
    const param = positional(params);
    const keyset = keysetSql({ at: 'a.created_at', id: 'a.id', direction: 'DESC' }, after, param);
    const where = [keyset.after];
    if (filter.action !== undefined) where.push(`a.action = ${param(filter.action)}`);
    if (filter.actorId !== undefined) where.push(`a.actor_id = ${param(filter.actorId)}::uuid`);
    if (filter.targetType !== undefined) where.push(`a.target_type = ${param(filter.targetType)}`);
    if (filter.targetId !== undefined) where.push(`a.target_id = ${param(filter.targetId)}`);
    return sqlRows<AuditRow>(
      this.txHost.tx,
      `SELECT a.id, a.actor_id, a.action, a.target_type, a.target_id, a.before, a.after,
              a.created_at, ${keyset.selectSortKey}
         FROM audit_log a WHERE ${where.join(' AND ')}
        ORDER BY ${keyset.orderBy}
        LIMIT $1`,
      params,
    );
  }
}
