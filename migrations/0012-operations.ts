import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operations across several instances: login-throttle counters shared by every instance, and a
 * record of each scheduled job's runs (which instance ran which period).
 */
export class Operations0012 implements MigrationInterface {
  name = 'Operations0000000000012';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // UNLOGGED: counters of a minute are not worth a write-ahead log; a crash empties them, which
    // only forgives the attempts of the current window.
    await queryRunner.query(`
          CREATE UNLOGGED TABLE "throttle_hits" (
              "key" text NOT NULL,
              "hits" integer NOT NULL,
              "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
              "blocked_until" TIMESTAMP WITH TIME ZONE,
              CONSTRAINT "PK_throttle_hits" PRIMARY KEY ("key")
          ) WITH (fillfactor = 80)
      `);
    await queryRunner.query(`
          CREATE TABLE "job_runs" (
              "id" bigint GENERATED ALWAYS AS IDENTITY,
              "job" text NOT NULL,
              "period_start" TIMESTAMP WITH TIME ZONE NOT NULL,
              "instance" text NOT NULL,
              "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              "finished_at" TIMESTAMP WITH TIME ZONE,
              "outcome" text,
              CONSTRAINT "CHK_job_runs_outcome" CHECK (outcome IN ('ok', 'failed', 'timed_out')),
              CONSTRAINT "PK_job_runs" PRIMARY KEY ("id")
          )
      `);
    await queryRunner.query(
      `CREATE INDEX "IDX_job_runs_job_period" ON "job_runs" ("job", "period_start")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "job_runs"`);
    await queryRunner.query(`DROP TABLE "throttle_hits"`);
  }
}
