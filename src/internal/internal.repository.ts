import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';

/** Every query on `used_session_tokens`, `traffic_reports` and `node_traffic_days`. */
@Injectable()
export class InternalRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * Spends a session token: true for the one call that recorded its id (the primary key decides
   * between concurrent calls), false when it was spent before.
   */
  async spendToken(jti: string, expiresAtS: number): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `INSERT INTO used_session_tokens (jti, expires_at) VALUES ($1, to_timestamp($2))
       ON CONFLICT (jti) DO NOTHING RETURNING jti`,
      [jti, expiresAtS],
    );
    return rows.length > 0;
  }

  /** Forgets up to `batch` spent ids whose tokens have expired (they can no longer validate). */
  async forgetExpiredTokens(batch: number): Promise<number> {
    const rows = await sqlRows(
      this.txHost.tx,
      `DELETE FROM used_session_tokens WHERE ctid IN (
         SELECT ctid FROM used_session_tokens WHERE expires_at < now() LIMIT $1)
       RETURNING 1`,
      [batch],
    );
    return rows.length;
  }

  /**
   * Forgets up to `batch` applied report ids received more than `days` ago: a node retries a
   * report for minutes, never for that long.
   */
  async forgetReportsOlderThan(days: number, batch: number): Promise<number> {
    const rows = await sqlRows(
      this.txHost.tx,
      `DELETE FROM traffic_reports WHERE ctid IN (
         SELECT ctid FROM traffic_reports WHERE received_at < now() - $1 * interval '1 day'
          LIMIT $2)
       RETURNING 1`,
      [days, batch],
    );
    return rows.length;
  }

  /**
   * Records a report as applied. False when this node's report id was applied before; a
   * concurrent delivery of the same id waits here for the first one's transaction to end.
   */
  async recordReport(nodeId: string, reportId: string, entries: number): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `INSERT INTO traffic_reports (node_id, report_id, entries) VALUES ($1, $2, $3)
       ON CONFLICT (node_id, report_id) DO NOTHING RETURNING report_id`,
      [nodeId, reportId, entries],
    );
    return rows.length > 0;
  }

  /** Adds a report's raw and counted bytes to the node's figures of the current UTC day. */
  async addNodeDay(nodeId: string, up: bigint, down: bigint, counted: bigint): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO node_traffic_days AS d (node_id, day, bytes_up, bytes_down, bytes_counted)
       VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2, $3, $4)
       ON CONFLICT (node_id, day) DO UPDATE SET bytes_up = d.bytes_up + EXCLUDED.bytes_up,
         bytes_down = d.bytes_down + EXCLUDED.bytes_down,
         bytes_counted = d.bytes_counted + EXCLUDED.bytes_counted`,
      [nodeId, up.toString(), down.toString(), counted.toString()],
    );
  }
}
