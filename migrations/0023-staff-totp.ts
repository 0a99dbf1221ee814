import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A second factor for staff sign-in: a TOTP secret per staff account (sealed like the other
 * secrets; `enabled_at` null while its enrolment awaits a first code), the last time step a code
 * was accepted at (a code is never taken twice), and one-time recovery codes (their SHA-256 only).
 */
export class StaffTotp0023 implements MigrationInterface {
  name = 'StaffTotp0000000000023';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "staff_totp" (
              "user_id" uuid NOT NULL,
              "secret_enc" text NOT NULL,
              "enabled_at" timestamptz,
              "last_step" bigint NOT NULL DEFAULT 0,
              "created_at" timestamptz NOT NULL DEFAULT now(),
              CONSTRAINT "PK_staff_totp" PRIMARY KEY ("user_id"),
              CONSTRAINT "FK_staff_totp_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "staff_recovery_codes" (
              "user_id" uuid NOT NULL,
              "code_sha256" bytea NOT NULL,
              "used_at" timestamptz,
              CONSTRAINT "PK_staff_recovery_codes" PRIMARY KEY ("user_id", "code_sha256"),
              CONSTRAINT "FK_staff_recovery_codes_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
          )
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "staff_recovery_codes"`);
    await queryRunner.query(`DROP TABLE "staff_totp"`);
  }
}
