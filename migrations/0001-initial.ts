import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial0001 implements MigrationInterface {
  name = 'Initial0000000000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "app_settings" (
              "key" text NOT NULL,
              "value" jsonb NOT NULL,
              "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "PK_975c2db59c65c05fd9c6b63a2ab" PRIMARY KEY ("key")
          )
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          DROP TABLE "app_settings"
      `);
  }
}
