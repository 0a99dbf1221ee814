import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';

export type JobRunOutcome = 'ok' | 'failed' | 'timed_out';

/** Every query on `job_runs`: one row per run of a periodic job, naming its period and instance. */
@Injectable()
export class JobRunsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * Records a run of `job` for the current period (of `periodS` seconds on the database clock)
   * unless one is recorded already; null then. Callers hold the job's advisory lock, so the check
   * and the insert cannot race with another instance.
   */
  async claim(job: string, periodS: number, instance: string): Promise<string | null> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `WITH period AS (
         SELECT to_timestamp(floor(extract(epoch FROM now()) / $2) * $2) AS start
       )
       INSERT INTO job_runs (job, period_start, instance)
       SELECT $1, period.start, $3 FROM period
        WHERE NOT EXISTS (
          SELECT 1 FROM job_runs r, period WHERE r.job = $1 AND r.period_start = period.start)
       RETURNING id`,
      [job, periodS, instance],
    );
    return rows[0]?.id ?? null;
  }

  async finish(id: string, outcome: JobRunOutcome): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE job_runs SET finished_at = now(), outcome = $2 WHERE id = $1`,
      [id, outcome],
    );
  }

  /** Deletes up to `batch` runs started more than `days` ago; returns how many. */
  async deleteOlderThan(days: number, batch: number): Promise<number> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `DELETE FROM job_runs
        WHERE id = ANY(ARRAY(
                SELECT id FROM job_runs WHERE started_at < now() - $1 * interval '1 day' LIMIT $2))
        RETURNING id`,
      [days, batch],
    );
    return rows.length;
  }
}
