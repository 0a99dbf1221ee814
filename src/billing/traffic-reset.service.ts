import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AdvisoryLocks } from '../database/advisory-lock';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { UserTrafficRepository } from '../users/user-traffic.repository';
import { Clock } from './clock';

/**
 * Users per statement of the reset job: each batch is one short transaction. Small, because a
 * traffic report that meets a batch's rows waits for the batch, and a batch of random users holds
 * some of nearly every report's: the wait a report sees grows with the square of the batch.
 */
export const TRAFFIC_RESET_BATCH = 250;

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
   * Batches until none is full (every due user taken, or the rest held by reports: the next run
   * takes those) or the job's time bound; `signal` stops it between batches.
   */
  private async resetDue(
    signal?: AbortSignal,
    batch = TRAFFIC_RESET_BATCH,
  ): Promise<TrafficResetReport> {
    const report = { ran: true, reset: 0, batches: 0 };
    const now = new Date(this.clock.now());
    for (;;) {
      if (signal?.aborted) return report;
      const done = await this.traffic.resetDue(now, batch, this.settings.trafficLimitDefaultBytes);
      report.batches += 1;
      report.reset += done.reset;
      if (done.picked < batch) return report;
    }
  }
}
