/**
 * The traffic-reset rule, in TypeScript for one user and in SQL for statements over many: when a
 * plan's used traffic next starts again from zero. All moments are UTC: `day` at 00:00 of each
 * day, `week` at 00:00 of each Monday, `month` at 00:00 of the plan's `reset_day` (1-28, so every
 * month has it), `rolling_month` every 30 days from the subscription's start; `none` never.
 * test/traffic-reset.e2e-spec.ts runs both forms on the same inputs and compares them.
 */

export const TRAFFIC_RESETS = ['none', 'day', 'week', 'month', 'rolling_month'] as const;
export type TrafficReset = (typeof TRAFFIC_RESETS)[number];

export const PLAN_STARTS = ['on_purchase', 'on_first_use'] as const;
export type PlanStart = (typeof PLAN_STARTS)[number];

const DAY_MS = 86_400_000;
/** A `rolling_month`. */
export const ROLLING_MONTH_DAYS = 30;

/** The first reset strictly after `after`; null for `none`. `anchor`: the subscription's start. */
export function nextResetAfter(
  reset: TrafficReset,
  resetDay: number,
  anchor: Date | null,
  after: Date,
): Date | null {
  const t = after.getTime();
  const midnight = midnightAtOrBefore(after).getTime();
  switch (reset) {
    case 'none':
      return null;
    case 'day':
      return new Date(midnight + DAY_MS);
    case 'week': {
      // getUTCDay: Sunday 0; days since this week's Monday.
      const sinceMonday = (after.getUTCDay() + 6) % 7;
      return new Date(midnight - sinceMonday * DAY_MS + 7 * DAY_MS);
    }
    case 'month': {
      const thisMonth = Date.UTC(after.getUTCFullYear(), after.getUTCMonth(), resetDay);
      return new Date(
        thisMonth > t
          ? thisMonth
          : Date.UTC(after.getUTCFullYear(), after.getUTCMonth() + 1, resetDay),
      );
    }
    case 'rolling_month': {
      const start = (anchor ?? after).getTime();
      const period = ROLLING_MONTH_DAYS * DAY_MS;
      const passed = Math.max(0, Math.floor((t - start) / period));
      return new Date(start + (passed + 1) * period);
    }
  }
}

/**
 * SQL: `nextResetAfter` of the plan columns `reset` and `day`, the timestamptz `anchor` and `after`
 * (expressions; `after` is read several times, so a parameter or a column). Null for `none`.
 */
export const nextResetSql = (reset: string, day: string, anchor: string, after: string): string => {
  const utc = `(${after} AT TIME ZONE 'UTC')`;
  const monthDay = `(date_trunc('month', ${utc}) + make_interval(days => ${day} - 1))`;
  return `(CASE ${reset}
    WHEN 'day' THEN (date_trunc('day', ${utc}) + interval '1 day') AT TIME ZONE 'UTC'
    WHEN 'week' THEN (date_trunc('week', ${utc}) + interval '7 days') AT TIME ZONE 'UTC'
    WHEN 'month' THEN (${monthDay} + CASE WHEN ${monthDay} > ${utc} THEN interval '0'
                                          ELSE interval '1 month' END) AT TIME ZONE 'UTC'
    WHEN 'rolling_month' THEN COALESCE(${anchor}, ${after}) + make_interval(days =>
      ${ROLLING_MONTH_DAYS} * (GREATEST(0, floor(extract(epoch FROM ${after} - COALESCE(${anchor}, ${after}))
        / ${ROLLING_MONTH_DAYS * 86_400}))::int + 1))
  END)`;
};

/**
 * SQL: the next reset of user `u` after `after` under the plan named by `planName` (an
 * expression), anchored at the user's start; null when that plan resets never or does not exist.
 */
export const userNextResetSql = (planName: string, anchor: string, after: string): string =>
  `(SELECT ${nextResetSql('rp.traffic_reset', 'rp.reset_day', anchor, after)}
      FROM plans rp WHERE rp.name = ${planName})`;

/** SQL: what a `rolling_month` of user `u` counts from: its start, else the latest it starts. */
export const RESET_ANCHOR_SQL = `COALESCE(u.subscription_started_at, u.subscription_on_hold_until)`;

/**
 * SQL: the timestamptz expression `at` is at 00:00 UTC, where every `day`, `week` and `month`
 * reset falls (a `rolling_month`'s only by chance).
 */
export const atMidnightSql = (at: string): string => `((${at}) AT TIME ZONE 'UTC')::time = '00:00'`;

/** The latest 00:00 UTC at or before `at`. */
export function midnightAtOrBefore(at: Date): Date {
  const t = at.getTime();
  return new Date(t - (((t % DAY_MS) + DAY_MS) % DAY_MS));
}
