import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Support tickets and their message threads. */
export class Tickets0004 implements MigrationInterface {
  name = 'Tickets0000000000004';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "tickets" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "user_id" uuid NOT NULL, "subject" text NOT NULL, "status" text NOT NULL DEFAULT 'open', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "closed_at" TIMESTAMP WITH TIME ZONE, "closed_by" uuid, "last_message_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_author_role" text NOT NULL, CONSTRAINT "CHK_tickets_closed_at" CHECK ((status = 'closed') = (closed_at IS NOT NULL)), CONSTRAINT "CHK_tickets_last_author_role" CHECK (last_author_role IN ('user', 'staff')), CONSTRAINT "CHK_tickets_status" CHECK (status IN ('open', 'closed')), CONSTRAINT "PK_343bc942ae261cf7a1377f48fd0" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_tickets_closed_queue" ON "tickets" ("closed_at", "id") WHERE status = 'closed'`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_tickets_open_queue" ON "tickets" ("created_at", "id") WHERE status = 'open'`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_tickets_user" ON "tickets" ("user_id", "created_at")`,
    );
    await queryRunner.query(
      `CREATE TABLE "ticket_messages" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "ticket_id" uuid NOT NULL, "author_id" uuid NOT NULL, "author_role" text NOT NULL, "body" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "CHK_ticket_messages_author_role" CHECK (author_role IN ('user', 'staff')), CONSTRAINT "PK_37beb692dedf7eccb4e519ccec1" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_ticket_messages_ticket" ON "ticket_messages" ("ticket_id", "created_at")`,
    );
    await queryRunner.query(
      `ALTER TABLE "tickets" ADD CONSTRAINT "FK_2e445270177206a97921e461710" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "tickets" ADD CONSTRAINT "FK_06e9c7d7cd9faad009d4f1282fd" FOREIGN KEY ("closed_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_messages" ADD CONSTRAINT "FK_75b3a5f421dbf7b73778da519cb" FOREIGN KEY ("ticket_id") REFERENCES "tickets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_messages" ADD CONSTRAINT "FK_f4bb678401a3375965ddd013f94" FOREIGN KEY ("author_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "ticket_messages" DROP CONSTRAINT "FK_f4bb678401a3375965ddd013f94"`,
    );
    await queryRunner.query(
      `ALTER TABLE "ticket_messages" DROP CONSTRAINT "FK_75b3a5f421dbf7b73778da519cb"`,
    );
    await queryRunner.query(
      `ALTER TABLE "tickets" DROP CONSTRAINT "FK_06e9c7d7cd9faad009d4f1282fd"`,
    );
    await queryRunner.query(
      `ALTER TABLE "tickets" DROP CONSTRAINT "FK_2e445270177206a97921e461710"`,
    );
    await queryRunner.query(`DROP INDEX "public"."IDX_ticket_messages_ticket"`);
    await queryRunner.query(`DROP TABLE "ticket_messages"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_tickets_user"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_tickets_open_queue"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_tickets_closed_queue"`);
    await queryRunner.query(`DROP TABLE "tickets"`);
  }
}
