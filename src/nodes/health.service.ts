import { connect } from 'node:net';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import type { NodeStatus } from './entities/node.entity';
import { type HealthTarget, NodesRepository } from './nodes.repository';

export interface HealthRun {
  checked: number;
  online: number;
  durationMs: number;
}

/** A TCP connection attempt: true when the port accepts within `timeoutMs`. */
export function probeTcp(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (up: boolean): void => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The health check of every node: a TCP connection to its tunnel port, NODE_HEALTH_CONCURRENCY at
 * a time, then one statement for all results. It only records `online`/`offline`; it never
 * restarts a node.
 */
@Injectable()
export class HealthService {
  private readonly logger = new Logger(HealthService.name);
  /** The most recent runs of this instance (a metric, and what tests read). */
  readonly runs: HealthRun[] = [];

  constructor(
    private readonly nodes: NodesRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** Checks every node now and records the results (JOBS.nodeHealth runs it once a period). */
  async checkAll(): Promise<HealthRun> {
    const started = Date.now();
    const targets = await this.nodes.healthTargets();
    const statuses = await this.probeAll(targets);
    await this.record(
      targets.map((target) => target.id),
      statuses,
    );
    const run: HealthRun = {
      checked: targets.length,
      online: statuses.filter((status) => status === 'online').length,
      durationMs: Date.now() - started,
    };
    this.runs.push(run);
    if (this.runs.length > 100) this.runs.shift();
    this.logger.log(`health checks: ${run.online}/${run.checked} online in ${run.durationMs} ms`);
    return run;
  }

  @Transactional()
  private record(ids: string[], statuses: NodeStatus[]): Promise<void> {
    return this.nodes.recordHealth(ids, statuses);
  }

  private async probeAll(targets: HealthTarget[]): Promise<NodeStatus[]> {
    const statuses = new Array<NodeStatus>(targets.length);
    // Below the interval, so a round always ends before the next one is due.
    const timeoutMs = Math.min(
      this.settings.nodeHealthTimeoutMs,
      Math.max(100, this.settings.nodeHealthIntervalS * 500),
    );
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < targets.length) {
        const index = next++;
        const target = targets[index];
        statuses[index] = (await probeTcp(target.host, target.port, timeoutMs))
          ? 'online'
          : 'offline';
      }
    };
    const workers = Math.min(this.settings.nodeHealthConcurrency, targets.length);
    await Promise.all(Array.from({ length: workers }, worker));
    return statuses;
  }
}
