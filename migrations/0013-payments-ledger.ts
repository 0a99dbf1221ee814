import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Money received is kept (received_payments) with how far the wallet was read (payment_scans);
 * indexes for the expiry job, the staff invoice list and the recent Telegram payments.
 */
export class PaymentsLedger0013 implements MigrationInterface {
  name = 'PaymentsLedger0000000000013';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "payment_scans" (
              "provider" text NOT NULL,
              "done_lt" bigint,
              "scan_top_lt" bigint,
              "scan_low_lt" bigint,
              "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "PK_9709336c7e18c565aa94d5ce363" PRIMARY KEY ("provider")
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "received_payments" (
              "id" uuid NOT NULL DEFAULT gen_random_uuid(),
              "tx_ref" text NOT NULL,
              "provider" text NOT NULL,
              "lt" bigint,
              "sender" text,
              "amount" bigint NOT NULL,
              "currency" text NOT NULL,
              "comment" text,
              "memo_key" text,
              "received_at" TIMESTAMP WITH TIME ZONE NOT NULL,
              "settled_at" TIMESTAMP WITH TIME ZONE,
              "reason" text,
              "invoice_id" uuid,
              "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "CHK_received_payments_reason" CHECK (
                  reason IN ('no_invoice', 'underpaid', 'too_late')
              ),
              CONSTRAINT "CHK_received_payments_provider" CHECK (provider IN ('ton', 'telegram')),
              CONSTRAINT "PK_2ea72790439ff65f10854352252" PRIMARY KEY ("id")
          )
      `);
    await queryRunner.query(`
          CREATE UNIQUE INDEX "UQ_received_payments_tx_ref" ON "received_payments" ("tx_ref")
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_received_payments_unmatched" ON "received_payments" ("received_at", "id")
          WHERE reason IS NOT NULL
              AND invoice_id IS NULL
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_received_payments_memo" ON "received_payments" ("provider", "memo_key")
          WHERE settled_at IS NULL
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_received_payments_unsettled" ON "received_payments" ("provider", "lt")
          WHERE settled_at IS NULL
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_invoices_created" ON "invoices" ("created_at", "id")
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_invoices_pending_expiry" ON "invoices" ("expires_at")
          WHERE status = 'pending'
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_telegram_payments_created" ON "telegram_payments" ("created_at")
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          DROP INDEX "public"."IDX_telegram_payments_created"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_invoices_pending_expiry"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_invoices_created"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_received_payments_unsettled"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_received_payments_memo"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_received_payments_unmatched"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."UQ_received_payments_tx_ref"
      `);
    await queryRunner.query(`
          DROP TABLE "received_payments"
      `);
    await queryRunner.query(`
          DROP TABLE "payment_scans"
      `);
  }
}
