import type { Settings } from '../config/settings';

/** A periodic job: its name (in metrics and `job_runs`), its lock, its period and its time bound. */
export interface JobSchedule {
  readonly name: string;
  /** The PostgreSQL advisory lock that keeps the job to one instance at a time. */
  readonly lockKey: number;
  /** The period in seconds, a named setting. */
  readonly intervalS: (settings: Settings) => number;
  /** A run longer than this is told to stop (its AbortSignal) and recorded as `timed_out`. */
  readonly timeoutMs: number;
  /**
   * How often each instance tries to claim the period (default 1). More than one tick per period
   * makes a run start soon after its period begins, so timer drift never leaves a period without
   * a run; the other ticks of the period count as `skipped`.
   */
  readonly ticksPerPeriod?: number;
}

/**
 * Every periodic job of the service, in one place. Each runs once per period across all instances:
 * the first instance to tick in a period claims it in `job_runs` under the job's lock.
 */
export const JOBS = {
  /** Stale invoices expired and payments looked up (`src/billing/reconciliation.service.ts`). */
  reconcile: {
    name: 'billing.reconcile',
    lockKey: 7_000_001,
    intervalS: (s) => s.reconcileIntervalS,
    timeoutMs: 120_000,
  },
  /** Expired throttle rows and old job records. */
  cleanup: {
    name: 'cleanup',
    lockKey: 7_000_010,
    intervalS: (s) => s.cleanupIntervalS,
    timeoutMs: 60_000,
  },
  /** Spent session-token ids past their expiry and old traffic-report ids. */
  trafficCleanup: {
    name: 'internal.cleanup',
    lockKey: 7_000_011,
    intervalS: (s) => s.cleanupIntervalS,
    timeoutMs: 60_000,
  },
  /** Device addresses not seen for minutes, and the credential change log past a day. */
  devicesCleanup: {
    name: 'devices.cleanup',
    lockKey: 7_000_012,
    intervalS: (s) => s.cleanupIntervalS,
    timeoutMs: 60_000,
  },
  /** Expired login codes, bootstrap tokens and refresh sessions (`src/auth/auth.jobs.ts`). */
  authCleanup: {
    name: 'auth.cleanup',
    lockKey: 7_000_013,
    intervalS: (s) => s.cleanupIntervalS,
    timeoutMs: 60_000,
  },
  /** Game rounds the leaderboard no longer needs (`src/game/game.jobs.ts`). */
  gameCleanup: {
    name: 'game.cleanup',
    lockKey: 7_000_014,
    intervalS: (s) => s.cleanupIntervalS,
    timeoutMs: 60_000,
  },
  /**
   * A TCP check of every node. Periods can be seconds long, so each instance ticks four times a
   * period: a node's status is then at most about 1.25 periods old.
   */
  nodeHealth: {
    name: 'nodes.health',
    lockKey: 7_000_201,
    intervalS: (s) => s.nodeHealthIntervalS,
    timeoutMs: 60_000,
    ticksPerPeriod: 4,
  },
  /** Fails provisionings that ran past NODE_PROVISION_TIMEOUT_S. */
  nodeWatchdog: {
    name: 'nodes.provision-watchdog',
    lockKey: 7_000_202,
    intervalS: (s) => s.nodeWatchdogIntervalS,
    timeoutMs: 60_000,
  },
  /** Plans' traffic resets that came due, in batches (`src/billing/traffic-reset.service.ts`). */
  trafficReset: {
    name: 'billing.traffic-reset',
    lockKey: 7_000_003,
    intervalS: (s) => s.trafficResetIntervalS,
    timeoutMs: 300_000,
  },
  /** The bot's traffic warnings (80% and 100% of the limit), sent once each. */
  botTrafficWarnings: {
    name: 'bot.traffic-warnings',
    lockKey: 7_000_103,
    intervalS: (s) => s.trafficResetIntervalS,
    timeoutMs: 120_000,
  },
  /** The bot's subscription reminders (`src/bot/reminders.service.ts`). */
  botReminders: {
    name: 'bot.reminders',
    lockKey: 7_000_101,
    intervalS: (s) => s.botReminderIntervalS,
    timeoutMs: 120_000,
  },
} as const satisfies Record<string, JobSchedule>;
