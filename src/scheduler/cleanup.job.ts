import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AuthRepository } from '../auth/auth.repository';
import { ThrottleCleanup } from '../common/throttling/throttle-cleanup.service';
import { GameRepository } from '../game/game.repository';
import { deleteInBatches } from './delete-in-batches';
import { JOBS } from './intervals';
import { JobRunner } from './job-runner.service';
import { JobRunsRepository } from './job-runs.repository';

/** How long the record of a job's run is kept. */
export const JOB_RUNS_KEPT_DAYS = 7;
const JOB_RUNS_BATCH = 1_000;
/** Rows deleted per statement: short statements keep locks and WAL bursts small. */
export const CLEANUP_BATCH = 5_000;
/** Statements per table and run, so one run stays bounded after a flood; the next run goes on. */
export const CLEANUP_MAX_BATCHES = 20;

/**
 * Every CLEANUP_INTERVAL_S, one instance at a time (the job's advisory lock): expired throttle
 * rows, old job records, expired login codes, bootstrap tokens and refresh sessions, and game
 * rounds the leaderboard no longer needs, each in batches.
 */
@Injectable()
export class CleanupJob implements OnModuleInit {
  constructor(
    private readonly jobs: JobRunner,
    private readonly throttles: ThrottleCleanup,
    private readonly runs: JobRunsRepository,
    private readonly auth: AuthRepository,
    private readonly game: GameRepository,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.cleanup, (signal) => this.run(signal));
  }

  /** Returns how many rows of each kind it deleted. */
  async run(signal?: AbortSignal): Promise<Record<string, number>> {
    const bounded = { batch: CLEANUP_BATCH, maxBatches: CLEANUP_MAX_BATCHES, signal };
    const deleted: Record<string, number> = {};
    deleted.throttle_hits = await this.throttles.run(signal);
    deleted.job_runs = await deleteInBatches(
      (batch) => this.runs.deleteOlderThan(JOB_RUNS_KEPT_DAYS, batch),
      { ...bounded, batch: JOB_RUNS_BATCH },
    );
    for (const table of ['login_codes', 'bootstrap_tokens', 'refresh_sessions'] as const) {
      deleted[table] = await deleteInBatches(
        (batch) => this.auth.deleteExpired(table, batch),
        bounded,
      );
    }
    deleted.game_rounds = await deleteInBatches((batch) => this.game.deleteSpent(batch), bounded);
    return deleted;
  }
}
