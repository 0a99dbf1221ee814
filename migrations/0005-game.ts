import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Board game rounds: the stored board, its state, and the scored click path. */
export class Game0005 implements MigrationInterface {
  name = 'Game0000000000005';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "game_rounds" ( "id" uuid NOT NULL DEFAULT gen_random_uuid(), "user_id" uuid NOT NULL, "board" jsonb NOT NULL, "status" text NOT NULL DEFAULT 'open', "score" integer, "cleared" integer, "clicks" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "CHK_game_rounds_score" CHECK ((status = 'finished') = (score IS NOT NULL)), CONSTRAINT "CHK_game_rounds_status" CHECK (status IN ('open', 'finished', 'abandoned')), CONSTRAINT "PK_9f9de91990bb512595f1058b98c" PRIMARY KEY ("id") )`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_game_rounds_leaderboard" ON "game_rounds" ("user_id", "score", "finished_at") WHERE status = 'finished'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_game_rounds_open_user" ON "game_rounds" ("user_id") WHERE status = 'open'`,
    );
    await queryRunner.query(
      `ALTER TABLE "game_rounds" ADD CONSTRAINT "FK_11c301c48f109807d8cfd543a87" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "game_rounds" DROP CONSTRAINT "FK_11c301c48f109807d8cfd543a87"`,
    );
    await queryRunner.query(`DROP INDEX "public"."UQ_game_rounds_open_user"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_game_rounds_leaderboard"`);
    await queryRunner.query(`DROP TABLE "game_rounds"`);
  }
}
