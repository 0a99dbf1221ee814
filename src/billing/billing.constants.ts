/** How long a pending invoice waits for its payment before it is `expired`. */
export const INVOICE_TTL_HOURS = 24;

/**
 * A pending TON invoice is offered again to the same user for the same plan and currency (instead
 * of a new one at a new rate) while it has at least this long left: time enough to pay it.
 */
export const INVOICE_REUSE_MIN_LEFT_MINUTES = 60;

/** A payment for an expired invoice is still credited this many days after the invoice was made. */
export const LATE_PAYMENT_DAYS = 7;

/** The PostgreSQL advisory lock under which one instance at a time reads the TON wallet. */
export const TON_SCAN_LOCK_KEY = 7_000_002;

/** The plan name a trial subscription carries. */
export const TRIAL_PLAN_NAME = 'trial';

/**
 * How many pending invoices one user may hold at once. Each new invoice may call a paid upstream
 * (the Bot API's createInvoiceLink, the rates API), so one account cannot make them without end.
 */
export const MAX_PENDING_INVOICES = 10;

/** Audit actions of plan changes (targetType `plan`, targetId the plan's name). */
export const PLAN_AUDIT_ACTIONS = {
  created: 'plan.created',
  changed: 'plan.changed',
} as const;
