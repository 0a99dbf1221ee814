import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  Optional,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AdvisoryLocks } from '../database/advisory-lock';
import { Metrics } from '../metrics/metrics.service';
import type { JobSchedule } from './intervals';
import { type JobRunOutcome, JobRunsRepository } from './job-runs.repository';

/** What one tick of a job did on this instance. */
export type TickResult =
  | JobRunOutcome
  /** Another instance holds the lock, or already ran this period. */
  | 'skipped'
  /** This instance is still running the previous tick, or is shutting down. */
  | 'busy'
  /** The database could not be reached; the next tick tries again. */
  | 'unavailable';

export type JobWork = (signal: AbortSignal) => Promise<unknown>;

/**
 * Runs every periodic job: once per period across all instances (the job's advisory lock, then a
 * claim of the period in `job_runs`), never overlapping itself, bounded in time, counted in metrics.
 * A failing run or a database that is away costs one period, never the process.
 */
@Injectable()
export class JobRunner implements BeforeApplicationShutdown {
  private readonly logger = new Logger(JobRunner.name);
  /** Names this instance in `job_runs`. */
  readonly instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly running = new Map<string, Promise<TickResult>>();
  private stopping = false;

  constructor(
    private readonly locks: AdvisoryLocks,
    private readonly runs: JobRunsRepository,
    private readonly metrics: Metrics,
    @Inject(SETTINGS) private readonly settings: Settings,
    /** Present only when the app runs its scheduled jobs (tests tick by hand). */
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {}

  /** Ticks `job` `ticksPerPeriod` times a period when the app runs its schedule. */
  every(job: JobSchedule, work: JobWork): void {
    if (!this.scheduler) return;
    const handle = setInterval(
      () => void this.tick(job, work),
      (job.intervalS(this.settings) * 1000) / (job.ticksPerPeriod ?? 1),
    );
    this.scheduler.addInterval(job.name, handle);
  }

  /** One tick: runs `work` unless another instance holds the job or has run it this period. */
  tick(job: JobSchedule, work: JobWork): Promise<TickResult> {
    if (this.stopping || this.running.has(job.name)) return Promise.resolve('busy');
    const run = this.lockedRun(job, work).finally(() => this.running.delete(job.name));
    this.running.set(job.name, run);
    return run;
  }

  /** Stops ticking and waits up to `timeoutMs` for the runs in progress. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    for (const name of this.scheduler?.getIntervals() ?? []) this.scheduler?.deleteInterval(name);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running.values()]),
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop(this.settings.shutdownGraceS * 1000);
  }

  private async lockedRun(job: JobSchedule, work: JobWork): Promise<TickResult> {
    let result: TickResult;
    try {
      const outcome = await this.locks.tryWithLock(job.lockKey, async () => {
        const runId = await this.runs.claim(job.name, job.intervalS(this.settings), this.instance);
        if (runId === null) return null;
        const started = performance.now();
        const outcome = await this.bounded(job, work);
        this.metrics.jobRun(job.name, outcome, (performance.now() - started) / 1000);
        await this.runs.finish(runId, outcome);
        return outcome;
      });
      result = outcome ?? 'skipped';
    } catch (error) {
      this.logger.warn({ err: error }, `${job.name}: skipped this period (${String(error)})`);
      result = 'unavailable';
    }
    if (result === 'skipped' || result === 'unavailable') this.metrics.jobRun(job.name, result);
    return result;
  }

  /** Runs `work`, telling it to stop after the job's time bound; never throws. */
  private async bounded(job: JobSchedule, work: JobWork): Promise<JobRunOutcome> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), job.timeoutMs);
    try {
      await work(controller.signal);
      return controller.signal.aborted ? 'timed_out' : 'ok';
    } catch (error) {
      this.logger.error({ err: error }, `${job.name} failed; it runs again next period`);
      return controller.signal.aborted ? 'timed_out' : 'failed';
    } finally {
      clearTimeout(timer);
    }
  }
}
