import { Injectable, type OnModuleInit } from '@nestjs/common';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { HealthService } from './health.service';
import { ProvisioningService } from './provisioning.service';

/**
 * The periodic jobs of nodes, each once per period across all instances (the job runner); tests
 * call the services directly.
 */
@Injectable()
export class NodeJobs implements OnModuleInit {
  constructor(
    private readonly jobs: JobRunner,
    private readonly health: HealthService,
    private readonly provisioning: ProvisioningService,
  ) {}

  onModuleInit(): void {
    this.jobs.every(JOBS.nodeHealth, () => this.health.checkAll());
    this.jobs.every(JOBS.nodeWatchdog, () => this.provisioning.failStale());
  }
}
