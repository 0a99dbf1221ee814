import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Staff roles, node access, partner fields on users, and the partner_commissions and withdrawal_requests tables. */
export class RolesAndPartners0003 implements MigrationInterface {
  name = 'RolesAndPartners0000000000003';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "users" ADD "role" text, ADD "can_manage_nodes" boolean NOT NULL DEFAULT false, ADD "commission_percent" numeric(5, 2), ADD "partner_code" text, ADD "referred_by_partner_id" uuid, ADD CONSTRAINT "CHK_users_commission_percent" CHECK ( commission_percent >= 0 AND commission_percent <= 100 ), ADD CONSTRAINT "CHK_users_role" CHECK ( role IN ('owner', 'moderator', 'partner', 'support') )`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_users_partner_code" ON "users" ("partner_code") WHERE partner_code IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "partner_commissions" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "partner_id" uuid NOT NULL, "buyer_id" uuid NOT NULL, "invoice_id" uuid NOT NULL, "plan_name" text NOT NULL, "currency" text NOT NULL, "price_minor" bigint NOT NULL, "percent" numeric(5, 2) NOT NULL, "amount_minor" bigint NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "CHK_partner_commissions_amount" CHECK (amount_minor >= 0), CONSTRAINT "PK_85ed05b111630f525888efb5680" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_partner_commissions_invoice" ON "partner_commissions" ("invoice_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_partner_commissions_partner" ON "partner_commissions" ("partner_id", "created_at")`,
    );
    await queryRunner.query(
      `CREATE TABLE "withdrawal_requests" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "partner_id" uuid NOT NULL, "amount" bigint NOT NULL, "currency" text NOT NULL, "destination" text NOT NULL, "status" text NOT NULL DEFAULT 'pending', "reason" text, "tx_ref" text, "decided_by" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "CHK_withdrawal_requests_amount" CHECK (amount > 0), CONSTRAINT "CHK_withdrawal_requests_status" CHECK ( status IN ('pending', 'approved', 'rejected', 'paid') ), CONSTRAINT "PK_e1b3734a3f3cbd46bf0ad7eedb6" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_withdrawal_requests_partner" ON "withdrawal_requests" ("partner_id", "currency")`,
    );
    await queryRunner.query(
      `ALTER TABLE "users" ADD CONSTRAINT "FK_191705b64b6369ede4dd49f8881" FOREIGN KEY ("referred_by_partner_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "partner_commissions" ADD CONSTRAINT "FK_febfa51b00d84a4286b72792792" FOREIGN KEY ("partner_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "partner_commissions" ADD CONSTRAINT "FK_5c988e141dd940c33885e46323c" FOREIGN KEY ("buyer_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "withdrawal_requests" ADD CONSTRAINT "FK_a1dc564168e17c612aafe747b06" FOREIGN KEY ("partner_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "users" DROP CONSTRAINT "FK_191705b64b6369ede4dd49f8881"`);
    await queryRunner.query(
      `ALTER TABLE "withdrawal_requests" DROP CONSTRAINT "FK_a1dc564168e17c612aafe747b06"`,
    );
    await queryRunner.query(
      `ALTER TABLE "partner_commissions" DROP CONSTRAINT "FK_5c988e141dd940c33885e46323c"`,
    );
    await queryRunner.query(
      `ALTER TABLE "partner_commissions" DROP CONSTRAINT "FK_febfa51b00d84a4286b72792792"`,
    );
    await queryRunner.query(`DROP INDEX "public"."IDX_withdrawal_requests_partner"`);
    await queryRunner.query(`DROP TABLE "withdrawal_requests"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_partner_commissions_partner"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_partner_commissions_invoice"`);
    await queryRunner.query(`DROP TABLE "partner_commissions"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_users_partner_code"`);
    await queryRunner.query(
      `ALTER TABLE "users" DROP CONSTRAINT "CHK_users_role", DROP CONSTRAINT "CHK_users_commission_percent", DROP COLUMN "role", DROP COLUMN "can_manage_nodes", DROP COLUMN "commission_percent", DROP COLUMN "partner_code", DROP COLUMN "referred_by_partner_id"`,
    );
  }
}
