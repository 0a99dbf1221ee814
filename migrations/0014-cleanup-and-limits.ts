import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Indexes for ending a whole sign-in (its refresh family) and for the clean-up job's deletes by expiry. */
export class CleanupAndLimits0014 implements MigrationInterface {
  name = 'CleanupAndLimits0000000000014';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "IDX_refresh_sessions_family" ON "refresh_sessions" ("family_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_refresh_sessions_expires" ON "refresh_sessions" ("expires_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_bootstrap_tokens_expires" ON "bootstrap_tokens" ("expires_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_login_codes_expires" ON "login_codes" ("expires_at")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_login_codes_expires"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_bootstrap_tokens_expires"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_refresh_sessions_expires"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_refresh_sessions_family"`);
  }
}
