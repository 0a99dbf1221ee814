import { Global, Module } from '@nestjs/common';
import { AuthRepository } from '../auth/auth.repository';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { GameRepository } from '../game/game.repository';
import { CleanupJob } from './cleanup.job';
import { JobRunner } from './job-runner.service';
import { JobRunsRepository } from './job-runs.repository';

/** Runs the periodic jobs of every feature (see intervals.ts), once per period across instances. */
@Global()
@Module({
  imports: [ThrottlingModule],
  // The clean-up deletes through each table's owning repository.
  providers: [JobRunsRepository, JobRunner, CleanupJob, AuthRepository, GameRepository],
  exports: [JobRunner],
})
export class SchedulerModule {}
