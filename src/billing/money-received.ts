/**
 * The money the business received, for every figure that reports it (the staff's GET /admin/stats,
 * the metric vpn_money_received_total): each paid invoice once, with `paid_at`, `provider`,
 * `currency`, the currency the money arrived in (TON for a `ton` invoice, whatever fiat priced it;
 * the invoice's own otherwise), `amount` in that currency's minor units (nanotons for TON), and
 * `invoice_ctid`, the invoice row's place (for a walk over the table's pages, `walkTablePages`).
 * A subquery: `FROM (${MONEY_RECEIVED_SQL}) r`. test/money-received.e2e-spec.ts holds the readers
 * to the same sums.
 */
export const MONEY_RECEIVED_SQL = `SELECT i.paid_at, i.provider, i.amount, i.ctid AS invoice_ctid,
         CASE WHEN i.provider = 'ton' THEN 'TON' ELSE i.currency END AS currency
    FROM invoices i WHERE i.status = 'paid'`;
