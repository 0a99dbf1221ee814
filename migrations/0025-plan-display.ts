import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plans named for buyers (issue 42, point 7): `display` holds a name and short description per
 * language (`{"ru": {"name": "Месяц", "description": "…"}}`); a language without one shows the slug.
 */
export class PlanDisplay0025 implements MigrationInterface {
  name = 'PlanDisplay0000000000025';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "plans" ADD "display" jsonb NOT NULL DEFAULT '{}',
         ADD CONSTRAINT "CHK_plans_display" CHECK (jsonb_typeof(display) = 'object')`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "plans" DROP CONSTRAINT "CHK_plans_display", DROP COLUMN "display"`,
    );
  }
}
