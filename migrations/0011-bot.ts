import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The bot: who opened a login link and whether it was cancelled, the chats it writes to, the
 * reminders it sent, and Telegram charges that arrived for an invoice already paid.
 */
export class Bot0011 implements MigrationInterface {
  name = 'Bot0000000000011';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "bot_chats" (
              "tg_id" bigint NOT NULL,
              "language_code" text,
              "unreachable_at" TIMESTAMP WITH TIME ZONE,
              "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "PK_c95009e9c6bcb93c8c39e1eadf9" PRIMARY KEY ("tg_id")
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "bot_reminders" (
              "user_id" uuid NOT NULL,
              "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
              "kind" text NOT NULL,
              "sent_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "CHK_bot_reminders_kind" CHECK (kind IN ('3d', '1d', 'ended')),
              CONSTRAINT "PK_f3afa9fc49025e2978db9697044" PRIMARY KEY ("user_id", "expires_at", "kind")
          )
      `);
    await queryRunner.query(`
          ALTER TABLE "login_codes"
          ADD "opened_by_user_id" uuid
      `);
    await queryRunner.query(`
          ALTER TABLE "login_codes"
          ADD "cancelled_at" TIMESTAMP WITH TIME ZONE
      `);
    await queryRunner.query(`
          ALTER TABLE "telegram_payments"
          ADD "duplicate_at" TIMESTAMP WITH TIME ZONE
      `);
    await queryRunner.query(`
          ALTER TABLE "telegram_payments"
          ADD "refunded_at" TIMESTAMP WITH TIME ZONE
      `);
    await queryRunner.query(`
          ALTER TABLE "login_codes"
          ADD CONSTRAINT "FK_a36a282266733da8c2d7861b663" FOREIGN KEY ("opened_by_user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      `);
    await queryRunner.query(`
          ALTER TABLE "bot_reminders"
          ADD CONSTRAINT "FK_e583fcf91e45c03186ee89d04c1" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          ALTER TABLE "bot_reminders" DROP CONSTRAINT "FK_e583fcf91e45c03186ee89d04c1"
      `);
    await queryRunner.query(`
          ALTER TABLE "login_codes" DROP CONSTRAINT "FK_a36a282266733da8c2d7861b663"
      `);
    await queryRunner.query(`
          ALTER TABLE "telegram_payments" DROP COLUMN "refunded_at"
      `);
    await queryRunner.query(`
          ALTER TABLE "telegram_payments" DROP COLUMN "duplicate_at"
      `);
    await queryRunner.query(`
          ALTER TABLE "login_codes" DROP COLUMN "cancelled_at"
      `);
    await queryRunner.query(`
          ALTER TABLE "login_codes" DROP COLUMN "opened_by_user_id"
      `);
    await queryRunner.query(`
          DROP TABLE "bot_reminders"
      `);
    await queryRunner.query(`
          DROP TABLE "bot_chats"
      `);
  }
}
