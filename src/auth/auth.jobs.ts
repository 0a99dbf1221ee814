import { Injectable, type OnModuleInit } from '@nestjs/common';
import { cleanUpInBatches } from '../scheduler/delete-in-batches';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { AuthRepository } from './auth.repository';

/** Every CLEANUP_INTERVAL_S: expired login codes, bootstrap tokens and refresh sessions. */
@Injectable()
export class AuthCleanupJob implements OnModuleInit {
  constructor(
    private readonly jobs: JobRunner,
    private readonly auth: AuthRepository,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.authCleanup, (signal) => this.run(signal));
  }

  /** How many rows of each table it deleted. */
  async run(signal?: AbortSignal): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const table of ['login_codes', 'bootstrap_tokens', 'refresh_sessions'] as const) {
      deleted[table] = await cleanUpInBatches(
        (batch) => this.auth.deleteExpired(table, batch),
        signal,
      );
    }
    return deleted;
  }
}
