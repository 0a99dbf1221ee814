import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { MONEY_RECEIVED_SQL } from '../billing/money-received';
import { sqlRows } from '../database/sql';
import { shownOnlineSql } from '../nodes/node-status';
import { subscriptionActiveSql } from '../users/subscription-active';

/** The business as it stands now. */
export interface StatsTotals {
  users: number;
  activeSubscriptions: number;
  openTickets: number;
  pendingWithdrawals: number;
  nodesOnline: number;
  nodesTotal: number;
  /** Subscriptions waiting for their first connection (`starts: on_first_use`). */
  waitingFirstUse: number;
}

/** One UTC day's figures. */
export interface StatsDay {
  /** `YYYY-MM-DD`, UTC. */
  date: string;
  signups: number;
  paidInvoices: number;
  /** Currency → amount received in its minor units (digits); TON in nanotons. */
  received: Record<string, string>;
  /** Raw bytes the nodes carried (up and down, before multipliers), digits. */
  trafficBytes: string;
  /** Traffic warnings (80% and 100% of the limit) the bot sent that day. */
  trafficWarnings: number;
}

/**
 * The staff figures: reads over several features' tables, each through an index on its time
 * column (users by creation, paid invoices by payment, node days by day), never a write.
 */
@Injectable()
export class StatsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async totals(): Promise<StatsTotals> {
    const [row] = await sqlRows<StatsTotals>(
      this.txHost.tx,
      `SELECT (SELECT count(*) FROM users)::int AS users,
              (SELECT count(*) FROM users WHERE ${subscriptionActiveSql('users')})::int
                AS "activeSubscriptions",
              (SELECT count(*) FROM tickets WHERE status = 'open')::int AS "openTickets",
              (SELECT count(*) FROM withdrawal_requests WHERE status = 'pending')::int
                AS "pendingWithdrawals",
              (SELECT count(*) FROM nodes n WHERE n.deleted_at IS NULL AND ${shownOnlineSql('n')})::int
                AS "nodesOnline",
              (SELECT count(*) FROM nodes WHERE deleted_at IS NULL)::int AS "nodesTotal",
              (SELECT count(*) FROM users WHERE subscription_on_hold_until > now())::int
                AS "waitingFirstUse"`,
    );
    return row;
  }

  /**
   * The last `days` UTC days, today included, oldest first. Money received (MONEY_RECEIVED_SQL,
   * as the metrics count it) by the day it was paid.
   */
  days(days: number): Promise<StatsDay[]> {
    return sqlRows<StatsDay>(
      this.txHost.tx,
      `WITH span AS (
         SELECT (now() AT TIME ZONE 'UTC')::date - ($1::int - 1) AS first
       ), days AS (
         SELECT (s.first + i)::date AS day FROM span s, generate_series(0, $1::int - 1) AS i
       ), signups AS (
         SELECT (u.created_at AT TIME ZONE 'UTC')::date AS day, count(*)::int AS n
           FROM users u, span s WHERE u.created_at >= s.first::timestamp AT TIME ZONE 'UTC'
          GROUP BY 1
       ), paid_by_currency AS (
         SELECT (r.paid_at AT TIME ZONE 'UTC')::date AS day, r.currency,
                count(*) AS n, sum(r.amount) AS amount
           FROM (${MONEY_RECEIVED_SQL}) r, span s
          WHERE r.paid_at >= s.first::timestamp AT TIME ZONE 'UTC'
          GROUP BY 1, 2
       ), paid AS (
         SELECT day, sum(n)::int AS n, jsonb_object_agg(currency, amount::text) AS received
           FROM paid_by_currency GROUP BY day
       ), traffic AS (
         SELECT t.day, sum(t.bytes_up + t.bytes_down) AS bytes
           FROM node_traffic_days t, span s WHERE t.day >= s.first GROUP BY t.day
       ), warnings AS (
         -- Not indexed: the reset job keeps the table to about a period's warnings per user.
         SELECT (w.sent_at AT TIME ZONE 'UTC')::date AS day, count(*)::int AS n
           FROM traffic_warnings w, span s
          WHERE w.sent_at >= s.first::timestamp AT TIME ZONE 'UTC' GROUP BY 1
       )
       SELECT to_char(d.day, 'YYYY-MM-DD') AS date, COALESCE(su.n, 0) AS signups,
              COALESCE(p.n, 0) AS "paidInvoices", COALESCE(p.received, '{}'::jsonb) AS received,
              COALESCE(t.bytes, 0)::text AS "trafficBytes", COALESCE(w.n, 0) AS "trafficWarnings"
         FROM days d LEFT JOIN signups su ON su.day = d.day LEFT JOIN paid p ON p.day = d.day
         LEFT JOIN traffic t ON t.day = d.day LEFT JOIN warnings w ON w.day = d.day
        ORDER BY d.day`,
      [days],
    );
  }
}
