import { Injectable, type OnModuleInit } from '@nestjs/common';
import { cleanUpInBatches } from '../scheduler/delete-in-batches';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { GameRepository } from './game.repository';

/** Every CLEANUP_INTERVAL_S: game rounds the leaderboard no longer needs. */
@Injectable()
export class GameCleanupJob implements OnModuleInit {
  constructor(
    private readonly jobs: JobRunner,
    private readonly game: GameRepository,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.gameCleanup, (signal) => this.run(signal));
  }

  /** How many rounds it deleted. */
  run(signal?: AbortSignal): Promise<number> {
    return cleanUpInBatches((batch) => this.game.deleteSpent(batch), signal);
  }
}
