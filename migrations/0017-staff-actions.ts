import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Staff actions on accounts: when staff blocked an account (null: not blocked; sign-ins, routing
 * and validation refuse it), and paid invoices by day for the staff figures (`GET /admin/stats`).
 */
export class StaffActions0017 implements MigrationInterface {
  name = 'StaffActions0000000000017';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "users" ADD "blocked_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(
      `CREATE INDEX "IDX_invoices_paid" ON "invoices" ("paid_at") WHERE status = 'paid'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_invoices_paid"`);
    await queryRunner.query(`ALTER TABLE "users" DROP COLUMN "blocked_at"`);
  }
}
