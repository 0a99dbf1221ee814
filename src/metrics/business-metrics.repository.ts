import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MONEY_RECEIVED_SQL } from '../billing/money-received';
import { Limiter } from '../common/concurrency/limiter';
import { sumSlices, walkTablePages } from '../database/page-walk';
import { sqlRows } from '../database/sql';
import { agentReportedSql } from '../nodes/node-status';
import { subscriptionActiveSql } from '../users/subscription-active';

export interface UserCounts {
  byKind: { kind: string; count: number }[];
  activeSubscriptions: number;
}

export interface PaymentTotals {
  /** The currency the money arrived in: TON for `ton` invoices, the invoice's own otherwise. */
  currency: string;
  provider: string;
  count: number;
  /** Sum of the amounts in the currency's minor units (nanotons for TON). */
  amountMinor: bigint;
}

export interface NodeCounts {
  byState: { status: string; provisionState: string; count: number }[];
  /** Seconds since the oldest last traffic report of a node that has reported; null if none has. */
  oldestReportAge: number | null;
  /**
   * Seconds since the last traffic report of each provisioned node whose agent is silent (no
   * report for over AGENT_SILENT_AFTER_S, having reported before).
   */
  silentReportAges: { node: string; seconds: number }[];
}

/**
 * The scrape-time reads behind the business metrics: one small aggregate per group, read-only,
 * outside any transaction. The counts of whole tables (accounts, devices, payments) walk their
 * table a slice of pages at a time (`walkTablePages`), one table at a time.
 */
@Injectable()
export class BusinessMetricsRepository {
  /** One walk over a whole table at a time, whatever groups a scrape reads at once. */
  private readonly walks = new Limiter(1);

  constructor(private readonly dataSource: DataSource) {}

  private walk<Row>(table: string, sql: string): Promise<Row[]> {
    return this.walks.run(() => walkTablePages<Row>(this.dataSource, table, sql));
  }

  async userCounts(): Promise<UserCounts> {
    const slices = await this.walk<{ kind: string; n: string; active: string }>(
      'users',
      `SELECT CASE WHEN role IS NOT NULL THEN role
                   WHEN tg_id IS NOT NULL THEN 'telegram'
                   ELSE 'seed' END AS kind,
              count(*) AS n,
              count(*) FILTER (WHERE ${subscriptionActiveSql('u')}) AS active
         FROM users u WHERE $1::tid <= u.ctid AND u.ctid < $2::tid GROUP BY 1`,
    );
    const rows = sumSlices(slices, ['kind'], ['n', 'active']);
    return {
      byKind: rows.map((r) => ({ kind: r.kind, count: Number(r.n) })),
      activeSubscriptions: rows.reduce((sum, r) => sum + Number(r.active), 0),
    };
  }

  /** Devices by how apps tell them apart (hwid, app, link). */
  async deviceCounts(): Promise<{ source: string; count: number }[]> {
    const slices = await this.walk<{ source: string; n: string }>(
      'devices',
      `SELECT source, count(*) AS n FROM devices d
        WHERE $1::tid <= d.ctid AND d.ctid < $2::tid GROUP BY source`,
    );
    return sumSlices(slices, ['source'], ['n']).map((r) => ({
      source: r.source,
      count: Number(r.n),
    }));
  }

  async pendingInvoices(): Promise<number> {
    const [row] = await sqlRows<{ n: string }>(
      this.dataSource,
      `SELECT count(*) AS n FROM invoices WHERE status = 'pending' AND expires_at > now()`,
    );
    return Number(row.n);
  }

  async paymentTotals(): Promise<PaymentTotals[]> {
    const slices = await this.walk<{
      currency: string;
      provider: string;
      n: string;
      amount: string;
    }>(
      'invoices',
      `SELECT r.currency, r.provider, count(*) AS n, sum(r.amount)::text AS amount
         FROM (${MONEY_RECEIVED_SQL}) r
        WHERE $1::tid <= r.invoice_ctid AND r.invoice_ctid < $2::tid GROUP BY 1, 2`,
    );
    return sumSlices(slices, ['currency', 'provider'], ['n', 'amount']).map((r) => ({
      currency: r.currency,
      provider: r.provider,
      count: Number(r.n),
      amountMinor: BigInt(r.amount),
    }));
  }

  /**
   * Nodes by health status and provision state, the oldest last traffic report, and the silent
   * agents' nodes one by one: counted in the database, so a scrape of 5,000 nodes reads a few rows
   * rather than one a node (5,000 per-node series took 10-30 ms of the event loop a scrape).
   */
  async nodeCounts(): Promise<NodeCounts> {
    const [states, silent] = await Promise.all([
      sqlRows<{ status: string; provision_state: string; n: number; oldest: number | null }>(
        this.dataSource,
        `SELECT status, provision_state, count(*)::int AS n,
                extract(epoch FROM now() - min(last_report_at))::float8 AS oldest
           FROM nodes WHERE deleted_at IS NULL GROUP BY 1, 2`,
      ),
      sqlRows<{ name: string; report_age_s: number }>(
        this.dataSource,
        `SELECT n.name, extract(epoch FROM now() - n.last_report_at)::float8 AS report_age_s
           FROM nodes n
          WHERE n.deleted_at IS NULL AND n.provision_state = 'ready'
            AND n.last_report_at IS NOT NULL AND NOT ${agentReportedSql('n')}`,
      ),
    ]);
    const ages = states.flatMap((row) => (row.oldest === null ? [] : [Number(row.oldest)]));
    return {
      byState: states.map((row) => ({
        status: row.status,
        provisionState: row.provision_state,
        count: row.n,
      })),
      oldestReportAge: ages.length > 0 ? Math.max(...ages) : null,
      silentReportAges: silent.map((row) => ({
        node: row.name,
        seconds: Number(row.report_age_s),
      })),
    };
  }
}
