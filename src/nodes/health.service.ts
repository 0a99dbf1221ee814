import { connect } from 'node:net';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import type { NodeStatus } from './entities/node.entity';
import { InwardHostError, NodeHosts } from './node-hosts';
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
 * The share of the period a round's probes are spread over. With probes of at most half the
 * period (the timeout's bound) a round ends within three quarters of it.
 */
export const HEALTH_SPREAD = 0.25;
/** And over 15 s at most, well inside the job's time bound (JOBS.nodeHealth, 60 s). */
export const HEALTH_SPREAD_MAX_MS = 15_000;

/** Nodes whose results one statement records. */
export const HEALTH_RECORD_BATCH = 250;

/** Probes at once at most, whatever the fleet: each holds a socket (a file descriptor). */
export const HEALTH_PROBES_MAX = 1_000;

/**
 * How many probes run at once: NODE_HEALTH_CONCURRENCY, raised for a large fleet so that a round
 * in which every probe waits its whole timeout (a data centre gone) still ends within half the
 * period. 5,000 nodes at 3 s per probe and 60 s per period: 500 at once, not 50 (300 s a round).
 * The probes' starts are spread over `HEALTH_SPREAD` of the period, so that many run at once only
 * while they wait for timeouts.
 */
export function healthConcurrency(
  targets: number,
  timeoutMs: number,
  intervalS: number,
  configured: number,
): number {
  const needed = Math.ceil((targets * timeoutMs) / (intervalS * 500));
  return Math.max(1, Math.min(targets, Math.max(configured, Math.min(needed, HEALTH_PROBES_MAX))));
}

/**
 * The health check of every node: a TCP connection to its tunnel port, `healthConcurrency` at a
 * time, their starts spread over a quarter of the period, then a statement per 250 results. It
 * only records `online`/`offline`; it never restarts a node.
 */
@Injectable()
export class HealthService {
  private readonly logger = new Logger(HealthService.name);
  /** The most recent runs of this instance (a metric, and what tests read). */
  readonly runs: HealthRun[] = [];

  constructor(
    private readonly nodes: NodesRepository,
    private readonly hosts: NodeHosts,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** Checks every node now and records the results (JOBS.nodeHealth runs it once a period). */
  async checkAll(): Promise<HealthRun> {
    const started = Date.now();
    const targets = await this.nodes.healthTargets();
    const statuses = await this.probeAll(targets);
    // In parts, each its own short transaction: one statement over 5,000 nodes held every node's
    // row for 100-500 ms while each report waited to stamp its node's `last_report_at`.
    for (let from = 0; from < targets.length; from += HEALTH_RECORD_BATCH) {
      await this.record(
        targets.slice(from, from + HEALTH_RECORD_BATCH).map((target) => target.id),
        statuses.slice(from, from + HEALTH_RECORD_BATCH),
      );
    }
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
    // Probe i starts no sooner than i × spacing into the round: thousands of connections opened
    // in one burst held the event loop for a second and every request waited behind them.
    const spreadMs = Math.min(
      this.settings.nodeHealthIntervalS * 1000 * HEALTH_SPREAD,
      HEALTH_SPREAD_MAX_MS,
    );
    const spacingMs = spreadMs / targets.length;
    const started = Date.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < targets.length) {
        const index = next++;
        const due = started + index * spacingMs - Date.now();
        if (due >= 1) await new Promise((resolve) => setTimeout(resolve, due));
        statuses[index] = (await this.probe(targets[index], timeoutMs)) ? 'online' : 'offline';
      }
    };
    const workers = healthConcurrency(
      targets.length,
      timeoutMs,
      this.settings.nodeHealthIntervalS,
      this.settings.nodeHealthConcurrency,
    );
    await Promise.all(Array.from({ length: workers }, worker));
    return statuses;
  }

  /**
   * One probe, to the address its name resolves to now and only when that is outward: the name
   * was checked when saved, but may point inward since. Resolution and connection share the time.
   */
  private async probe(target: HealthTarget, timeoutMs: number): Promise<boolean> {
    const started = Date.now();
    let address: string | null;
    try {
      address = await this.hosts.connectAddress(target.host, timeoutMs);
    } catch (error) {
      if (!(error instanceof InwardHostError)) throw error;
      this.logger.warn({ node_id: target.id }, `health check skipped: ${error.message}`);
      return false;
    }
    const left = timeoutMs - (Date.now() - started);
    return address !== null && left > 0 && probeTcp(address, target.port, left);
  }
}
