import type { JobRunOutcome } from './job-runs.repository';

/** What became of a job's tick: its run's outcome, or why it did not run here. */
export type JobOutcome = JobRunOutcome | 'skipped' | 'unavailable';

/**
 * Where the job runner tells each tick's outcome, and a run's duration in seconds: the metrics
 * module provides it (`vpn_job_runs_total`, `vpn_job_duration_seconds`), so the scheduler imports
 * no feature.
 */
export abstract class JobRunRecorder {
  abstract jobRun(job: string, outcome: JobOutcome, seconds?: number): void;
}
