import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { sqlRows } from '../database/sql';
import { cursorAtSql, type KeysetCursor } from '../common/pagination';

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
  cursor_at: string;
}

/** Every query on `audit_log`. */
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, entry: NewAuditEntry): Promise<void> {
    await manager.query(
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
    let where = '';
    if (after) {
      params.push(after.at, after.id);
      where = 'WHERE (a.created_at, a.id) < ($2::timestamptz, $3::uuid)';
    }
    return sqlRows<AuditRow>(
      this.dataSource,
      `SELECT a.id, a.actor_id, a.action, a.target_type, a.target_id, a.before, a.after,
              a.created_at, ${cursorAtSql('a.created_at')} AS cursor_at
         FROM audit_log a ${where}
        ORDER BY a.created_at DESC, a.id DESC
        LIMIT $1`,
      params,
    );
  }
}
