import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { uuidRangesDescending } from '../common/uuid';
import { AdvisoryLocks } from '../database/advisory-lock';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { midnightAtOrBefore } from '../users/traffic-reset';
import { type ResetDueSource, UserTrafficRepository } from '../users/user-traffic.repository';
import { Clock } from './clock';

/** Users per statement of the reset job: each batch is one short transaction. */
export const TRAFFIC_RESET_BATCH = 1_000;

/**
 * How long after a midnight the job reads `users` once more: a transaction that set a reset at
 * that midnight just before it, and committed only after the first read found nobody due, has
 * ended by then.
 */
export const SWEEP_SETTLE_MS = 5 * 60_000;

/**
 * Whether a run at `now` must read `users` for users due at a midnight, where every `day`, `week`
 * and `month` reset falls: none has found nobody due since the last midnight (`sweptUntil`), or
 * none since SWEEP_SETTLE_MS after it, once that has passed; or there was none (or one ahead of
 * the clock). A night's reads are then two, until each finds nobody due.
 */
export function sweepDue(now: Date, sweptUntil: Date | null): boolean {
  if (sweptUntil === null || sweptUntil > now) return true;
  const settled = midnightAtOrBefore(now).getTime() + SWEEP_SETTLE_MS;
  const swept = sweptUntil.getTime();
  return swept < settled - SWEEP_SETTLE_MS || (swept < settled && now.getTime() >= settled);
}

export interface TrafficResetReport {
  /** False when another instance was running it. */
  ran: boolean;
  /** Users whose used traffic went back to zero. */
  reset: number;
  /** Batches (statements) it took. */
  batches: number;
}

/**
 * Plans' traffic resets (`traffic_reset`): every TRAFFIC_RESET_INTERVAL_S, once per period across
 * instances, the users whose reset came due by the service's clock start again from zero, in
 * batches of one statement each (`UserTrafficRepository.resetDue`). Agents learn of it through the
 * limits and credentials they already read: a user the reset takes back under its limit is a
 * credential change.
 */
@Injectable()
export class TrafficResetService implements OnModuleInit {
  constructor(
    private readonly traffic: UserTrafficRepository,
    private readonly clock: Clock,
    private readonly locks: AdvisoryLocks,
    private readonly jobs: JobRunner,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.trafficReset, (signal) => this.resetDue(signal));
  }

  /** A run now (tests, operators), unless one is going on somewhere; `ran: false` then. */
  async run(signal?: AbortSignal, batch = TRAFFIC_RESET_BATCH): Promise<TrafficResetReport> {
    return (
      (await this.locks.tryWithLock(JOBS.trafficReset.lockKey, () =>
        this.resetDue(signal, batch),
      )) ?? { ran: false, reset: 0, batches: 0 }
    );
  }

  /**
   * Resets the due users. After a midnight (`sweepDue`), every due user is counted in `users`
   * (one scan): none due at a midnight is recorded, the last such count until the next midnight,
   * and any due are swept by id range, which also writes again the `next_traffic_resets` row of
   * a due user that had none. Otherwise only the rows of `next_traffic_resets` due are counted
   * (migration 0027): a batch's worth or fewer, as in most runs, are one batch found through that
   * table's index, more are swept.
   */
  private async resetDue(
    signal?: AbortSignal,
    batch = TRAFFIC_RESET_BATCH,
  ): Promise<TrafficResetReport> {
    const now = new Date(this.clock.now());
    if (sweepDue(now, await this.traffic.sweptUntil())) {
      const due = await this.traffic.countResetsDue(now, 'in-users');
      if (due.atMidnight === 0) await this.traffic.recordSwept(now);
      return this.sweep(now, due.n, 'id-range', batch, signal);
    }
    const { n: due } = await this.traffic.countResetsDue(now, 'next-resets');
    return this.sweep(now, due, due <= batch ? 'next-resets' : 'id-range', batch, signal);
  }

  /**
   * Resets about `due` due users in batches of about `batch`, each found as `source` says, by id
   * range from the highest ids down: traffic reports lock their users from the lowest id up, so a
   * report meets the sweep's rows once and waits for one batch at most, where batches of users
   * taken at random would hold some of its users in nearly every batch. Ends when every range is
   * done (users a report held are the next run's) or `signal` stops it between batches.
   */
  private async sweep(
    now: Date,
    due: number,
    source: ResetDueSource,
    batch: number,
    signal?: AbortSignal,
  ): Promise<TrafficResetReport> {
    const report = { ran: true, reset: 0, batches: 0 };
    if (due === 0) return report;
    for (const ids of uuidRangesDescending(Math.ceil(due / batch))) {
      for (;;) {
        if (signal?.aborted) return report;
        const done = await this.traffic.resetDue(
          now,
          batch,
          this.settings.trafficLimitDefaultBytes,
          ids,
          source,
        );
        report.batches += 1;
        report.reset += done.reset;
        if (done.picked < batch) break;
      }
    }
    return report;
  }
}
