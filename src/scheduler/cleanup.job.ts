import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ThrottleCleanup } from '../common/throttling/throttle-cleanup.service';
import { CLEANUP_MAX_BATCHES, deleteInBatches } from './delete-in-batches';
import { JOBS } from './intervals';
import { JobRunner } from './job-runner.service';
import { JobRunsRepository } from './job-runs.repository';

/** How long the record of a job's run is kept. */
export const JOB_RUNS_KEPT_DAYS = 7;
const JOB_RUNS_BATCH = 1_000;

/**
 * Every CLEANUP_INTERVAL_S, one instance at a time (the job's advisory lock): expired throttle
 * rows and old job records, in batches. Each feature cleans its own tables with a job of its own
 * (auth.jobs.ts, game.jobs.ts, devices.jobs.ts, internal.jobs.ts) in the same batches.
 */
@Injectable()
export class CleanupJob implements OnModuleInit {
  constructor(
    private readonly jobs: JobRunner,
    private readonly throttles: ThrottleCleanup,
    private readonly runs: JobRunsRepository,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.cleanup, (signal) => this.run(signal));
  }

  /** Returns how many rows of each kind it deleted. */
  async run(signal?: AbortSignal): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    deleted.throttle_hits = await this.throttles.run(signal);
    deleted.job_runs = await deleteInBatches(
      (batch) => this.runs.deleteOlderThan(JOB_RUNS_KEPT_DAYS, batch),
      { batch: JOB_RUNS_BATCH, maxBatches: CLEANUP_MAX_BATCHES, signal },
    );
    return deleted;
  }
}
