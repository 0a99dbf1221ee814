import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `users` and `devices` analyzed by autovacuum once their rows changed twice over, not a tenth.
 * Every traffic report rewrites the counters of each of its users and devices, so with 20 % of a
 * million accounts online a tenth of each table changed every 30 s and PostgreSQL analyzed both
 * every minute, reading a sample of 30,000 rows each time: about 2-4 s of a core a minute, all at
 * the same second (bench:fleet). The counters are not what the planner's statistics describe; the
 * columns it does read (expiry and reset dates, sources) change by the day. Twice over is about
 * every 10 minutes at that scale, and still within minutes for a small one.
 */
export class CountersAnalyzedLessOften0031 implements MigrationInterface {
  name = 'CountersAnalyzedLessOften0000000000031';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "users" SET (autovacuum_analyze_scale_factor = 2)`);
    await queryRunner.query(`ALTER TABLE "devices" SET (autovacuum_analyze_scale_factor = 2)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "devices" RESET (autovacuum_analyze_scale_factor)`);
    await queryRunner.query(`ALTER TABLE "users" RESET (autovacuum_analyze_scale_factor)`);
  }
}
