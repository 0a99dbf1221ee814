import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Accounts, refresh sessions, bot login codes and bootstrap tokens. */
export class Accounts0002 implements MigrationInterface {
  name = 'Accounts0000000000002';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "users" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "username" text, "password_hash" text, "seed_hash" text, "tg_id" bigint, "tg_username" text, "referred_by_user_id" uuid, "plan_name" text, "subscription_expires_at" TIMESTAMP WITH TIME ZONE, "traffic_used_bytes" bigint NOT NULL DEFAULT '0', "traffic_limit_bytes" bigint, "trial_used_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "CHK_users_traffic_used" CHECK (traffic_used_bytes >= 0), CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_users_username" ON "users" ("username") WHERE username IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_users_seed_hash" ON "users" ("seed_hash") WHERE seed_hash IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_users_tg_id" ON "users" ("tg_id") WHERE tg_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "bootstrap_tokens" ( "token_hash" bytea NOT NULL, "user_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_dd9945c6f77a6dfe64436ec580b" PRIMARY KEY ("token_hash") )`,
    );
    await queryRunner.query(
      `CREATE TABLE "login_codes" ( "code_hash" bytea NOT NULL, "poll_secret_hash" bytea NOT NULL, "user_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "confirmed_at" TIMESTAMP WITH TIME ZONE, "delivered_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_7869623b464d15ba8325fae3506" PRIMARY KEY ("code_hash") )`,
    );
    await queryRunner.query(
      `CREATE TABLE "refresh_sessions" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "user_id" uuid NOT NULL, "family_id" uuid NOT NULL, "token_hash" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "rotated_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_9190032f6967b7971dca07d69f3" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_refresh_sessions_token_hash" ON "refresh_sessions" ("token_hash")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_refresh_sessions_user" ON "refresh_sessions" ("user_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "users" ADD CONSTRAINT "FK_c4de8784831eab14aace7c26e65" FOREIGN KEY ("referred_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "bootstrap_tokens" ADD CONSTRAINT "FK_3a4eb874cfdd36a6790082c44f8" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "login_codes" ADD CONSTRAINT "FK_45e847b1916cbf7803cce32e9ef" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "refresh_sessions" ADD CONSTRAINT "FK_a7ab4fd82c654c85b9de53d971a" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "refresh_sessions" DROP CONSTRAINT "FK_a7ab4fd82c654c85b9de53d971a"`,
    );
    await queryRunner.query(
      `ALTER TABLE "login_codes" DROP CONSTRAINT "FK_45e847b1916cbf7803cce32e9ef"`,
    );
    await queryRunner.query(
      `ALTER TABLE "bootstrap_tokens" DROP CONSTRAINT "FK_3a4eb874cfdd36a6790082c44f8"`,
    );
    await queryRunner.query(`ALTER TABLE "users" DROP CONSTRAINT "FK_c4de8784831eab14aace7c26e65"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_refresh_sessions_user"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_refresh_sessions_token_hash"`);
    await queryRunner.query(`DROP TABLE "refresh_sessions"`);
    await queryRunner.query(`DROP TABLE "login_codes"`);
    await queryRunner.query(`DROP TABLE "bootstrap_tokens"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_users_tg_id"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_users_seed_hash"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_users_username"`);
    await queryRunner.query(`DROP TABLE "users"`);
  }
}
