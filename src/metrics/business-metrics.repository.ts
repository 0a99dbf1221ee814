import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MONEY_RECEIVED_SQL } from '../billing/money-received';
import { Limiter } from '../common/concurrency/limiter';
import { sumSlices, walkTablePages } from '../database/page-walk';
import { sqlRows } from '../database/sql';
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
  /** Seconds since each node's last traffic report, for nodes that have reported. */
  reportAges: { node: string; seconds: number }[];
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

  /** Nodes by health status and provision state, and the age of each one's last traffic report. */
  async nodeCounts(): Promise<NodeCounts> {
    const rows = await sqlRows<{
      name: string;
      status: string;
      provision_state: string;
      report_age_s: number | null;
    }>(
      this.dataSource,
      `SELECT name, status, provision_state,
              extract(epoch FROM now() - last_report_at)::float8 AS report_age_s
         FROM nodes WHERE deleted_at IS NULL`,
    );
    const byState = new Map<string, { status: string; provisionState: string; count: number }>();
    for (const row of rows) {
      const key = `${row.status}|${row.provision_state}`;
      const entry = byState.get(key) ?? {
        status: row.status,
        provisionState: row.provision_state,
        count: 0,
      };
      entry.count += 1;
      byState.set(key, entry);
    }
    return {
      byState: [...byState.values()],
      reportAges: rows
        .filter((r) => r.report_age_s !== null)
        .map((r) => ({ node: r.name, seconds: Number(r.report_age_s) })),
    };
  }
}
