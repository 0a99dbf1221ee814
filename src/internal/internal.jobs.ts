import { Injectable, type OnModuleInit } from '@nestjs/common';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { InternalService } from './internal.service';

/** Every CLEANUP_INTERVAL_S: spent session-token ids past expiry, then old report ids. */
@Injectable()
export class InternalCleanupJob implements OnModuleInit {
  constructor(
    private readonly jobs: JobRunner,
    private readonly internal: InternalService,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.trafficCleanup, (signal) => this.run(signal));
  }

  async run(signal?: AbortSignal): Promise<void> {
    await this.internal.forgetExpiredTokens(signal);
    await this.internal.forgetOldReports(signal);
  }
}
