import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { preparedRows, sqlRows } from '../database/sql';
import { type TrafficStanding, trafficStandingsSql } from '../users/users.repository';

/**
 * Every query on `used_session_tokens`, `traffic_reports` and `node_traffic_days`. Spending a token
 * also reads its user's standing, with the users repository's statement (`trafficStandingsSql`).
 */
@Injectable()
export class InternalRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * Spends a session token and reads its user's traffic standing, in one statement (every proxy
   * connect runs it). `spent` is true for the one call that recorded the token's id (the primary
   * key decides between concurrent calls), false when it was spent before; `standing` is null
   * when the user does not exist.
   */
  async spendToken(
    token: { jti: string; expiresAtS: number; userId: string },
    defaultLimitBytes: bigint,
  ): Promise<{ spent: boolean; standing: TrafficStanding | null }> {
    const [row] = await preparedRows<TrafficStanding & { spent: boolean }>(
      this.txHost.tx,
      'spend_session_token',
      `WITH spent AS (
         INSERT INTO used_session_tokens (jti, expires_at) VALUES ($1, to_timestamp($2))
         ON CONFLICT (jti) DO NOTHING RETURNING jti
       )
       SELECT EXISTS (SELECT 1 FROM spent) AS spent, s.*
         FROM (SELECT 1) AS one LEFT JOIN (${trafficStandingsSql('ARRAY[$3]', '$4')}) s ON true`,
      [token.jti, token.expiresAtS, token.userId, defaultLimitBytes.toString()],
    );
    const { spent, ...standing } = row;
    return { spent, standing: standing.id === null ? null : standing };
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
   * Records reports as applied, in one statement: the `node/report` keys of those recorded now.
   * A key applied before is left out, and so is a repeat of a key within `reports`; a concurrent
   * delivery of the same key waits here for the first one's transaction to end.
   */
  async recordReports(reports: ReportRecord[]): Promise<Set<string>> {
    const rows = await sqlRows<{ key: string }>(
      this.txHost.tx,
      `INSERT INTO traffic_reports (node_id, report_id, entries)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[])
       ON CONFLICT (node_id, report_id) DO NOTHING
       RETURNING node_id || '/' || report_id AS key`,
      [
        reports.map((report) => report.nodeId),
        reports.map((report) => report.reportId),
        reports.map((report) => report.entries),
      ],
    );
    return new Set(rows.map((row) => row.key));
  }

  /** Adds each node's raw and counted bytes to its figures of the current UTC day (one statement). */
  async addNodeDays(days: NodeDay[]): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO node_traffic_days AS d (node_id, day, bytes_up, bytes_down, bytes_counted)
       SELECT v.node_id, (now() AT TIME ZONE 'UTC')::date, v.up, v.down, v.counted
         FROM unnest($1::uuid[], $2::numeric[], $3::numeric[], $4::numeric[])
              AS v(node_id, up, down, counted)
       ON CONFLICT (node_id, day) DO UPDATE SET bytes_up = d.bytes_up + EXCLUDED.bytes_up,
         bytes_down = d.bytes_down + EXCLUDED.bytes_down,
         bytes_counted = d.bytes_counted + EXCLUDED.bytes_counted`,
      [
        days.map((day) => day.nodeId),
        days.map((day) => day.up.toString()),
        days.map((day) => day.down.toString()),
        days.map((day) => day.counted.toString()),
      ],
    );
  }
}

/** A report to record: its node, its id and how many entries it had. */
export interface ReportRecord {
  nodeId: string;
  reportId: string;
  entries: number;
}

/** One node's figures of one report batch; `nodeId`s of one call are distinct. */
export interface NodeDay {
  nodeId: string;
  up: bigint;
  down: bigint;
  counted: bigint;
}
