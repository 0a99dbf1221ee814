import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plans that reset used traffic each period, warn before the limit bites, and may start on the
 * first connection (issue 45).
 *
 * `users.traffic_reset_at` is the user's next reset (null: none due), kept by every statement that
 * starts or moves a subscription, so the reset job finds its due users through a partial index
 * instead of reading every user each run. `traffic_resets` records each reset once per user and
 * period (its key). A subscription waiting for its first connection has `subscription_on_hold_until`
 * set and ends at that moment plus the plan's days, so the nodes admit it meanwhile and a hold that
 * lapses unused has started at its end; the first counted traffic moves the end to now plus the days.
 * `traffic_warnings` holds each 80%/100% warning once per user and period, until the bot sends it.
 */
export class PlanPeriods0022 implements MigrationInterface {
  name = 'PlanPeriods0000000000022';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "plans" ADD "traffic_reset" text NOT NULL DEFAULT 'none',
         ADD "reset_day" integer NOT NULL DEFAULT 1,
         ADD "starts" text NOT NULL DEFAULT 'on_purchase',
         ADD "on_hold_max_days" integer NOT NULL DEFAULT 30,
         ADD CONSTRAINT "CHK_plans_traffic_reset"
           CHECK (traffic_reset IN ('none', 'day', 'week', 'month', 'rolling_month')),
         ADD CONSTRAINT "CHK_plans_reset_day" CHECK (reset_day BETWEEN 1 AND 28),
         ADD CONSTRAINT "CHK_plans_starts" CHECK (starts IN ('on_purchase', 'on_first_use')),
         ADD CONSTRAINT "CHK_plans_on_hold_max_days" CHECK (on_hold_max_days BETWEEN 1 AND 365)`,
    );
    // Existing subscriptions started before anyone recorded it: their account's creation stands in.
    await queryRunner.query(
      `ALTER TABLE "users" ADD "subscription_started_at" timestamptz,
         ADD "subscription_on_hold_until" timestamptz,
         ADD "traffic_reset_at" timestamptz`,
    );
    await queryRunner.query(
      `UPDATE "users" SET "subscription_started_at" = "created_at"
        WHERE "subscription_expires_at" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_users_traffic_reset_at" ON "users" ("traffic_reset_at")
        WHERE traffic_reset_at IS NOT NULL`,
    );
    await queryRunner.query(`
          CREATE TABLE "traffic_resets" (
              "user_id" uuid NOT NULL,
              "period_start" timestamptz NOT NULL,
              "bytes_before" bigint NOT NULL,
              "reset_at" timestamptz NOT NULL DEFAULT now(),
              CONSTRAINT "PK_traffic_resets" PRIMARY KEY ("user_id", "period_start"),
              CONSTRAINT "FK_traffic_resets_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "traffic_warnings" (
              "user_id" uuid NOT NULL,
              "kind" text NOT NULL,
              "period_key" timestamptz NOT NULL,
              "created_at" timestamptz NOT NULL DEFAULT now(),
              "sent_at" timestamptz,
              CONSTRAINT "PK_traffic_warnings" PRIMARY KEY ("user_id", "kind", "period_key"),
              CONSTRAINT "FK_traffic_warnings_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE,
              CONSTRAINT "CHK_traffic_warnings_kind" CHECK (kind IN ('traffic80', 'traffic100'))
          )
      `);
    await queryRunner.query(
      `CREATE INDEX "IDX_traffic_warnings_unsent" ON "traffic_warnings" ("created_at")
        WHERE sent_at IS NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "bot_chats" ADD "warnings_off" boolean NOT NULL DEFAULT false`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "bot_chats" DROP COLUMN "warnings_off"`);
    await queryRunner.query(`DROP TABLE "traffic_warnings"`);
    await queryRunner.query(`DROP TABLE "traffic_resets"`);
    await queryRunner.query(`DROP INDEX "IDX_users_traffic_reset_at"`);
    await queryRunner.query(
      `ALTER TABLE "users" DROP COLUMN "traffic_reset_at", DROP COLUMN "subscription_on_hold_until",
         DROP COLUMN "subscription_started_at"`,
    );
    await queryRunner.query(
      `ALTER TABLE "plans" DROP CONSTRAINT "CHK_plans_on_hold_max_days",
         DROP CONSTRAINT "CHK_plans_starts", DROP CONSTRAINT "CHK_plans_reset_day",
         DROP CONSTRAINT "CHK_plans_traffic_reset", DROP COLUMN "on_hold_max_days",
         DROP COLUMN "starts", DROP COLUMN "reset_day", DROP COLUMN "traffic_reset"`,
    );
  }
}
