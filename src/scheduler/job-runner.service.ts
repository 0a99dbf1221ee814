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
import type { JobSchedule } from './intervals';
import { JobRunRecorder } from './job-run-recorder';
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
 * How soon after start each job ticks once (or at its first interval, when that is sooner), so a
 * period that came due while no instance ran is not left until the next one.
 */
export const FIRST_TICK_MS = 1_000;

/**
 * Where in its tick period the `index`-th job an instance schedules ticks, as a share of the period
 * (above 0, below 1): the golden ratio's multiples, so that however many jobs there are, no two of
 * them tick together. Jobs of one period ticking at once started together every minute, eight
 * cleanups and checks, and the requests of that second waited behind them (bench/RESULTS.md,
 * issue 46).
 */
export function tickPhase(index: number): number {
  return ((index + 1) * GOLDEN_RATIO) % 1;
}
const GOLDEN_RATIO = (1 + Math.sqrt(5)) / 2;

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
  /** When the runs in progress stop being waited for (`performance.now()`), once stopping. */
  private stopDeadline = Infinity;
  /** Jobs scheduled so far: the next one's place in `tickPhase`. */
  private scheduled = 0;
  /** The names of this runner's timers in the scheduler registry. */
  private readonly timers = { intervals: new Set<string>(), timeouts: new Set<string>() };

  constructor(
    private readonly locks: AdvisoryLocks,
    private readonly runs: JobRunsRepository,
    private readonly metrics: JobRunRecorder,
    @Inject(SETTINGS) private readonly settings: Settings,
    /** Present only when the app runs its scheduled jobs (tests tick by hand). */
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {}

  /**
   * Ticks `job` `ticksPerPeriod` times a period when the app runs its schedule, each job of the
   * instance at a phase of its own in the tick period (`tickPhase`), and once soon after start: a
   * tick runs the job only when `job_runs` holds no run of the current period, so a period that
   * came due while the service was down (a restart, a crash) runs within seconds, once across
   * instances, and a period already run is left alone.
   */
  every(job: JobSchedule, work: JobWork): void {
    const scheduler = this.scheduler;
    if (!scheduler) return;
    const tickMs = (job.intervalS(this.settings) * 1000) / (job.ticksPerPeriod ?? 1);
    // The regular ticks from the job's phase on: the first of them no later than a tick period
    // after start, as without a phase.
    this.once(scheduler, `${job.name}:phase`, tickPhase(this.scheduled++) * tickMs, () => {
      void this.tick(job, work);
      scheduler.addInterval(
        job.name,
        setInterval(() => void this.tick(job, work), tickMs),
      );
      this.timers.intervals.add(job.name);
    });
    this.once(scheduler, `${job.name}:first`, Math.min(FIRST_TICK_MS, tickMs), () => {
      void this.tick(job, work);
    });
  }

  /** Calls `then` once after `ms`, on a timer of this runner that `stop()` clears. */
  private once(scheduler: SchedulerRegistry, name: string, ms: number, then: () => void): void {
    scheduler.addTimeout(
      name,
      setTimeout(() => {
        scheduler.deleteTimeout(name);
        this.timers.timeouts.delete(name);
        then();
      }, ms),
    );
    this.timers.timeouts.add(name);
  }

  /** One tick: runs `work` unless another instance holds the job or has run it this period. */
  tick(job: JobSchedule, work: JobWork): Promise<TickResult> {
    if (this.stopping || this.running.has(job.name)) return Promise.resolve('busy');
    const run = this.lockedRun(job, work).finally(() => this.running.delete(job.name));
    this.running.set(job.name, run);
    return run;
  }

  /**
   * Stops ticking and waits up to `timeoutMs` for the runs in progress. A second call (the app's
   * shutdown hook after SIGTERM's) waits no longer than the first allowed.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    for (const name of this.timers.intervals) this.scheduler?.deleteInterval(name);
    for (const name of this.timers.timeouts) this.scheduler?.deleteTimeout(name);
    this.timers.intervals.clear();
    this.timers.timeouts.clear();
    this.stopDeadline = Math.min(this.stopDeadline, performance.now() + timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running.values()]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, Math.max(0, this.stopDeadline - performance.now()));
      }),
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
