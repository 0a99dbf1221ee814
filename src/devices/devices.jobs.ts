import { Injectable, type OnModuleInit } from '@nestjs/common';
import { cleanUpInBatches, deleteInBatches } from '../scheduler/delete-in-batches';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { CredentialsRepository } from './credentials.repository';
import { PresenceRepository } from './presence.repository';
import { PRESENCE_KEPT_MINUTES } from './presence.service';

/** How long the credential change log is kept; a node further behind takes its whole set. */
export const CREDENTIAL_CHANGES_KEPT_DAYS = 1;

/**
 * Every CLEANUP_INTERVAL_S: device addresses not seen for minutes (they are kept only as long as
 * the one-address rule needs them), and the credential change log past a day.
 */
@Injectable()
export class DevicesCleanupJob implements OnModuleInit {
  constructor(
    private readonly jobs: JobRunner,
    private readonly presence: PresenceRepository,
    private readonly credentials: CredentialsRepository,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.devicesCleanup, (signal) => this.run(signal));
  }

  async run(signal?: AbortSignal): Promise<void> {
    // In batches, as every clean-up: a node farm gone for minutes leaves its devices all at once.
    await cleanUpInBatches(
      (batch) => this.presence.forgetOlderThan(PRESENCE_KEPT_MINUTES, batch),
      signal,
    );
    await deleteInBatches(
      (batch) => this.credentials.forgetOlderThan(CREDENTIAL_CHANGES_KEPT_DAYS, batch),
      { batch: 1_000, signal },
    );
  }
}
