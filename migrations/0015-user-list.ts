import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Indexes for the staff user list (newest first, optionally of one role). */
export class UserList0015 implements MigrationInterface {
  name = 'UserList0000000000015';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_users_created" ON "users" ("created_at", "id")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_users_role_created" ON "users" ("role", "created_at", "id")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_users_role_created"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_users_created"`);
  }
}
