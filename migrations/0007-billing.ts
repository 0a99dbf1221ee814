import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Plans and their prices, invoices, and the Telegram payments the bot records. */
export class Billing0007 implements MigrationInterface {
  name = 'Billing0000000000007';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "plans" (
              "name" text NOT NULL,
              "duration_days" integer NOT NULL,
              "traffic_limit_bytes" bigint NOT NULL,
              "active" boolean NOT NULL DEFAULT true,
              "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "CHK_plans_traffic_limit" CHECK (traffic_limit_bytes >= 0),
              CONSTRAINT "CHK_plans_duration_days" CHECK (duration_days > 0),
              CONSTRAINT "PK_253d25dae4c94ee913bc5ec4850" PRIMARY KEY ("name")
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "invoices" (
              "id" uuid NOT NULL,
              "user_id" uuid NOT NULL,
              "plan_name" text NOT NULL,
              "currency" text NOT NULL,
              "amount" bigint NOT NULL,
              "provider" text NOT NULL,
              "status" text NOT NULL DEFAULT 'pending',
              "payment" jsonb NOT NULL,
              "comment" text,
              "provider_tx_ref" text,
              "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              "paid_at" TIMESTAMP WITH TIME ZONE,
              "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
              CONSTRAINT "CHK_invoices_amount" CHECK (amount > 0),
              CONSTRAINT "CHK_invoices_status" CHECK (status IN ('pending', 'paid', 'expired')),
              CONSTRAINT "CHK_invoices_provider" CHECK (provider IN ('ton', 'telegram')),
              CONSTRAINT "PK_668cef7c22a427fd822cc1be3ce" PRIMARY KEY ("id")
          )
      `);
    await queryRunner.query(`
          CREATE UNIQUE INDEX "UQ_invoices_comment" ON "invoices" ("comment")
          WHERE comment IS NOT NULL
      `);
    await queryRunner.query(`
          CREATE UNIQUE INDEX "UQ_invoices_provider_tx_ref" ON "invoices" ("provider_tx_ref")
          WHERE provider_tx_ref IS NOT NULL
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_invoices_open" ON "invoices" ("provider", "created_at")
          WHERE status <> 'paid'
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_invoices_user" ON "invoices" ("user_id", "created_at")
      `);
    await queryRunner.query(`
          CREATE TABLE "plan_prices" (
              "plan_name" text NOT NULL,
              "currency" text NOT NULL,
              "amount_minor" bigint NOT NULL,
              CONSTRAINT "CHK_plan_prices_amount" CHECK (amount_minor > 0),
              CONSTRAINT "PK_c3dc6dd2cbfa054fd91165555e2" PRIMARY KEY ("plan_name", "currency")
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "telegram_payments" (
              "telegram_payment_charge_id" text NOT NULL,
              "invoice_id" uuid NOT NULL,
              "tg_id" bigint NOT NULL,
              "currency" text NOT NULL,
              "total_amount" bigint NOT NULL,
              "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "PK_d1d7fea819da2b86961f9c4340c" PRIMARY KEY ("telegram_payment_charge_id")
          )
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_telegram_payments_invoice" ON "telegram_payments" ("invoice_id")
      `);
    await queryRunner.query(`
          ALTER TABLE "invoices"
          ADD CONSTRAINT "FK_26daf5e433d6fb88ee32ce93637" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
      `);
    await queryRunner.query(`
          ALTER TABLE "invoices"
          ADD CONSTRAINT "FK_6db2342a43373f5ff13b8e38ce5" FOREIGN KEY ("plan_name") REFERENCES "plans"("name") ON DELETE RESTRICT ON UPDATE NO ACTION
      `);
    await queryRunner.query(`
          ALTER TABLE "plan_prices"
          ADD CONSTRAINT "FK_53f9b17a4cef35ce15f14532975" FOREIGN KEY ("plan_name") REFERENCES "plans"("name") ON DELETE CASCADE ON UPDATE NO ACTION
      `);
    await queryRunner.query(`
          ALTER TABLE "telegram_payments"
          ADD CONSTRAINT "FK_a0c8be65bbebe155c9d4d2dc9ff" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          ALTER TABLE "telegram_payments" DROP CONSTRAINT "FK_a0c8be65bbebe155c9d4d2dc9ff"
      `);
    await queryRunner.query(`
          ALTER TABLE "plan_prices" DROP CONSTRAINT "FK_53f9b17a4cef35ce15f14532975"
      `);
    await queryRunner.query(`
          ALTER TABLE "invoices" DROP CONSTRAINT "FK_6db2342a43373f5ff13b8e38ce5"
      `);
    await queryRunner.query(`
          ALTER TABLE "invoices" DROP CONSTRAINT "FK_26daf5e433d6fb88ee32ce93637"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_telegram_payments_invoice"
      `);
    await queryRunner.query(`
          DROP TABLE "telegram_payments"
      `);
    await queryRunner.query(`
          DROP TABLE "plan_prices"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_invoices_user"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_invoices_open"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."UQ_invoices_provider_tx_ref"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."UQ_invoices_comment"
      `);
    await queryRunner.query(`
          DROP TABLE "invoices"
      `);
    await queryRunner.query(`
          DROP TABLE "plans"
      `);
  }
}
