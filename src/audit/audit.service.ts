import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { validationFailed } from '../common/errors';
import { AuditRepository, type NewAuditEntry } from './audit.repository';
import { DEFAULT_PAGE_LIMIT } from '../common/pagination';
import { type AuditPage } from './dto/audit.dto';
import { decodeCursor, encodeCursor, type KeysetCursor } from '../common/pagination';

/** Actions recorded so far; other features add theirs. */
export const AUDIT_ACTIONS = {
  staffCreated: 'staff.created',
  nodeAccessChanged: 'user.node_access_changed',
  trafficLimitChanged: 'user.traffic_limit_changed',
  defaultTrafficLimitChanged: 'settings.traffic_limit_default_changed',
} as const;

export type AuditEntry = NewAuditEntry;

/** The audit log: who changed access, limits or money, from what to what, and when. */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  /**
   * Records one action. `manager` must be the transaction that makes the change, so the entry
   * exists exactly when the change does.
   */
  record(manager: EntityManager, entry: AuditEntry): Promise<void> {
    return this.audit.insert(manager, entry);
  }

  /** Newest first. */
  async list(limit = DEFAULT_PAGE_LIMIT, cursor?: string): Promise<AuditPage> {
    const after = parseCursor(cursor);
    const rows = await this.audit.page(limit + 1, after);
    const items = rows.slice(0, limit);
    const last = rows.length > limit ? items[items.length - 1] : undefined;
    return {
      items: items.map((row) => ({
        id: row.id,
        actor_id: row.actor_id,
        action: row.action,
        target_type: row.target_type,
        target_id: row.target_id,
        before: row.before,
        after: row.after,
        created_at: row.created_at.toISOString(),
      })),
      next_cursor: last ? encodeCursor({ at: last.cursor_at, id: last.id }) : null,
    };
  }
}

/** A cursor from the query string; one this service did not make is a 400. */
export function parseCursor(cursor: string | undefined): KeysetCursor | null {
  if (cursor === undefined || cursor === '') return null;
  const decoded = decodeCursor(cursor);
  if (!decoded) throw validationFailed([{ field: 'cursor', message: 'is not a valid cursor' }]);
  return decoded;
}
