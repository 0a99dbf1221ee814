import type { DataSource } from 'typeorm';
import { type InvoiceFilter, invoicePageQuery } from '../../src/billing/billing.repository';
import {
  EXPIRE_STALE_SQL,
  RECENT_TELEGRAM_PAYMENTS_SQL,
} from '../../src/billing/billing.repository';
import { unmatchedPageQuery, UNSETTLED_SQL } from '../../src/billing/received-payments.repository';

/** A statement as the service runs it, with its parameters. */
export interface HotQuery {
  name: string;
  sql: string;
  params: unknown[];
  /** The index its plan must use. */
  index: string;
}

const page = (filter: InvoiceFilter) => invoicePageQuery(filter, null, 51);

/** The billing statements that run often or over tables that only grow. */
export const HOT_QUERIES: readonly HotQuery[] = [
  {
    name: 'expiry job (expireStale)',
    sql: EXPIRE_STALE_SQL,
    params: [],
    index: 'IDX_invoices_pending_expiry',
  },
  {
    name: 'recent Telegram payments (reconciliation)',
    sql: RECENT_TELEGRAM_PAYMENTS_SQL,
    params: [7, 1000],
    index: 'IDX_telegram_payments_created',
  },
  { name: 'staff invoice list', ...page({}), index: 'IDX_invoices_created' },
  {
    name: 'staff invoice list, ?status=paid (a third of all rows)',
    ...page({ status: 'paid' }),
    index: 'IDX_invoices_created',
  },
  {
    // Pending invoices are few (at most 10 per user, for a day): read them all and sort.
    name: 'staff invoice list, ?status=pending',
    ...page({ status: 'pending' }),
    index: 'IDX_invoices_pending_expiry',
  },
  {
    name: 'unmatched payments list',
    ...unmatchedPageQuery(null, 51),
    index: 'IDX_received_payments_unmatched',
  },
  {
    name: 'received TON transfers to settle (reconciliation)',
    sql: UNSETTLED_SQL,
    params: ['ton', 1000],
    index: 'IDX_received_payments_unsettled',
  },
];

/**
 * `rows` invoices of `userId` over the last `rows` minutes (half TON, half Telegram; 1% pending,
 * the rest paid or expired), a Telegram charge for each Telegram invoice, and a received transfer
 * for each TON one (1% unmatched, 1% not yet settled); then ANALYZE, as autovacuum would.
 */
export async function fillBilling(db: DataSource, userId: string, rows: number): Promise<void> {
  await db.query(
    `INSERT INTO invoices (id, user_id, plan_name, currency, amount, provider, status, payment,
       comment, provider_tx_ref, created_at, paid_at, expires_at)
     SELECT gen_random_uuid(), $1, 'monthly', 'USD', 1000,
       CASE WHEN g % 2 = 0 THEN 'ton' ELSE 'telegram' END,
       CASE WHEN g % 100 = 0 THEN 'pending' WHEN g % 3 = 0 THEN 'paid' ELSE 'expired' END,
       '{}'::jsonb,
       CASE WHEN g % 2 = 0 THEN 'vol-' || g END,
       CASE WHEN g % 100 <> 0 AND g % 3 = 0 THEN 'vol-tx-' || g END,
       now() - make_interval(mins => g), NULL,
       now() - make_interval(mins => g) + interval '24 hours'
     FROM generate_series(1, $2::int) g`,
    [userId, rows],
  );
  await db.query(
    `INSERT INTO telegram_payments
       (telegram_payment_charge_id, invoice_id, tg_id, currency, total_amount, created_at)
     SELECT 'vol-charge-' || i.id, i.id, 1, 'USD', 1000, i.created_at FROM invoices i
     WHERE i.provider = 'telegram' AND i.comment IS NULL AND i.payment = '{}'::jsonb`,
  );
  await db.query(
    `INSERT INTO received_payments (tx_ref, provider, lt, sender, amount, currency, comment,
       memo_key, received_at, settled_at, reason, invoice_id)
     SELECT 'vol-' || i.comment, 'ton', 10 * row_number() OVER (ORDER BY i.created_at), '0:AB',
       1000, 'TON', i.comment, i.comment, i.created_at,
       CASE WHEN right(i.comment, 2) = '50' THEN NULL ELSE i.created_at END,
       CASE WHEN right(i.comment, 2) = '00' THEN 'no_invoice' END,
       CASE WHEN right(i.comment, 2) NOT IN ('00', '50') THEN i.id END
     FROM invoices i WHERE i.comment LIKE 'vol-%'`,
  );
  await db.query('ANALYZE invoices, telegram_payments, received_payments');
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

export interface QueryPlan {
  /** Every node, e.g. `Index Scan IDX_invoices_created` or `Seq Scan invoices`. */
  nodes: string[];
  /** With `analyze`: the execution time in ms. */
  executionMs: number | null;
  text: string;
}

/**
 * The plan of `query` (EXPLAIN, or EXPLAIN ANALYZE inside a transaction rolled back, so an
 * UPDATE changes nothing), optionally with some indexes dropped for the comparison.
 */
export async function planOf(
  db: DataSource,
  query: HotQuery,
  options: { analyze?: boolean; without?: readonly string[] } = {},
): Promise<QueryPlan> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    for (const index of options.without ?? []) await runner.query(`DROP INDEX "${index}"`);
    const how = options.analyze ? 'ANALYZE, ' : '';
    const [row] = (await runner.query(
      `EXPLAIN (${how}FORMAT JSON) ${query.sql}`,
      query.params,
    )) as {
      'QUERY PLAN': { Plan: PlanNode; 'Execution Time'?: number }[];
    }[];
    const textRows = (await runner.query(`EXPLAIN (COSTS OFF) ${query.sql}`, query.params)) as {
      'QUERY PLAN': string;
    }[];
    const nodes: string[] = [];
    const walk = (node: PlanNode) => {
      nodes.push(
        `${node['Node Type']} ${node['Index Name'] ?? node['Relation Name'] ?? ''}`.trim(),
      );
      node.Plans?.forEach(walk);
    };
    const plan = row['QUERY PLAN'][0];
    walk(plan.Plan);
    return {
      nodes,
      executionMs: plan['Execution Time'] ?? null,
      text: textRows.map((r) => r['QUERY PLAN']).join('\n'),
    };
  } finally {
    await runner.rollbackTransaction().catch(() => undefined);
    await runner.release();
  }
}
