import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { sqlRows } from '../../database/sql';

export interface ThrottleCount {
  hits: number;
  /** Whole seconds until the window ends (0 when it has). */
  expiresInS: number;
  /** Whole seconds until the block ends; 0 when not blocked. */
  blockedForS: number;
}

// The row's state before this hit: under a block that still runs; or due a new window because
// the last one (or the block) is over; or counting within its window.
const BLOCKED = `t.blocked_until > now()`;
const NEW_WINDOW = `(t.expires_at <= now() OR t.blocked_until IS NOT NULL)`;
const HITS_AFTER = `CASE WHEN ${NEW_WINDOW} THEN 1 ELSE t.hits + 1 END`;

/**
 * Every query on `throttle_hits`: one row per throttle key and window, shared by every instance.
 * Statements run outside any business transaction on purpose: an attempt counts even when the
 * request's own work rolls back.
 */
@Injectable()
export class ThrottleHitsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Counts one hit in one statement (one round trip): starts the key's window, counts within it,
   * or leaves it alone while it is blocked; blocks for `blockMs` the hit that goes past `limit`.
   */
  async hit(key: string, ttlMs: number, limit: number, blockMs: number): Promise<ThrottleCount> {
    const [row] = await sqlRows<{ hits: number; expires_in_s: number; blocked_for_s: number }>(
      this.dataSource,
      `INSERT INTO throttle_hits AS t (key, hits, expires_at, blocked_until)
       VALUES ($1, 1, now() + $2 * interval '1 millisecond',
               CASE WHEN 1 > $3 THEN now() + $4 * interval '1 millisecond' END)
       ON CONFLICT (key) DO UPDATE SET
         hits = CASE WHEN ${BLOCKED} THEN t.hits ELSE ${HITS_AFTER} END,
         expires_at = CASE WHEN ${BLOCKED} OR NOT ${NEW_WINDOW} THEN t.expires_at
                           ELSE EXCLUDED.expires_at END,
         blocked_until = CASE WHEN ${BLOCKED} THEN t.blocked_until
                              WHEN ${HITS_AFTER} > $3 THEN now() + $4 * interval '1 millisecond'
                         END
       RETURNING hits,
         greatest(0, ceil(extract(epoch FROM expires_at - now())))::int AS expires_in_s,
         coalesce(greatest(0, ceil(extract(epoch FROM blocked_until - now()))), 0)::int
           AS blocked_for_s`,
      [key, ttlMs, limit, blockMs],
    );
    return { hits: row.hits, expiresInS: row.expires_in_s, blockedForS: row.blocked_for_s };
  }

  /**
   * Deletes up to `batch` rows whose window and block are both over; returns how many. A row
   * counted again meanwhile has moved and no longer matches, so a live window is never lost.
   */
  async deleteExpired(batch: number): Promise<number> {
    const rows = await sqlRows<{ key: string }>(
      this.dataSource,
      `DELETE FROM throttle_hits
        WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM throttle_hits
                 WHERE expires_at < now() AND (blocked_until IS NULL OR blocked_until < now())
                 LIMIT $1))
          AND expires_at < now() AND (blocked_until IS NULL OR blocked_until < now())
        RETURNING key`,
      [batch],
    );
    return rows.length;
  }
}
