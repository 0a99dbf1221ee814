import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The audit log of staff actions on access, limits and money. */
export class AuditLog0006 implements MigrationInterface {
  name = 'AuditLog0000000000006';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "audit_log" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "actor_id" uuid, "action" text NOT NULL, "target_type" text NOT NULL, "target_id" text, "before" jsonb, "after" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_07fefa57f7f5ab8fc3f52b3ed0b" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_log_target" ON "audit_log" ("target_type", "target_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_log_created_at" ON "audit_log" ("created_at", "id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "audit_log" ADD CONSTRAINT "FK_15a6f5aad57db494c17986ed2e2" FOREIGN KEY ("actor_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "audit_log" DROP CONSTRAINT "FK_15a6f5aad57db494c17986ed2e2"`,
    );
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_log_created_at"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_log_target"`);
    await queryRunner.query(`DROP TABLE "audit_log"`);
  }
}
