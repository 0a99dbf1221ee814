import { Global, Module } from '@nestjs/common';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { CleanupJob } from './cleanup.job';
import { JobRunner } from './job-runner.service';
import { JobRunsRepository } from './job-runs.repository';

/** Runs the periodic jobs of every feature (see intervals.ts), once per period across instances. */
@Global()
@Module({
  imports: [ThrottlingModule],
  providers: [JobRunsRepository, JobRunner, CleanupJob],
  exports: [JobRunner],
})
export class SchedulerModule {}
