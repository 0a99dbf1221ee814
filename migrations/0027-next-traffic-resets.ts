import type { MigrationInterface, QueryRunner } from 'typeorm';

/** SQL: the timestamptz `at` is at 00:00 UTC, where every `day`, `week` and `month` reset falls. */
const AT_MIDNIGHT = (at: string): string => `((${at}) AT TIME ZONE 'UTC')::time = '00:00'`;

/**
 * The reset job's count of due users read every row of `users` each minute, since
 * `users.traffic_reset_at` has no index (0026): 0.3-0.4 s of PostgreSQL a minute at a million
 * accounts, with nothing due. Resets fall due in two ways, and each is now found without it:
 *
 * - A `day`, `week` or `month` reset is always at 00:00 UTC, so those users can fall due only when
 *   a midnight passes: the job reads `users` once after each midnight (more often only while
 *   users it found are left), and `traffic_reset_sweeps` keeps when it last found nobody due.
 * - Every other next reset (a `rolling_month`'s, at any moment) is also in `next_traffic_resets`,
 *   a narrow table with the index on the time that `users` cannot have: the job counts and finds
 *   those users there each run.
 *
 * Triggers keep `next_traffic_resets` for every statement but the reset job's own
 * (`RESET_DUE_SQL`), which says so with `vpn.resets_recorded` (0024) and keeps its batch's rows
 * itself: none in a mass reset at a midnight, where a row for each user cost the job 44 % more time.
 */
export class NextTrafficResets0027 implements MigrationInterface {
  name = 'NextTrafficResets0000000000027';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "next_traffic_resets" (
              "user_id" uuid NOT NULL,
              "reset_at" timestamptz NOT NULL,
              CONSTRAINT "PK_next_traffic_resets" PRIMARY KEY ("user_id"),
              CONSTRAINT "FK_next_traffic_resets_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
          )
      `);
    await queryRunner.query(
      `CREATE INDEX "IDX_next_traffic_resets_reset_at" ON "next_traffic_resets" ("reset_at")`,
    );
    await queryRunner.query(`
          CREATE TABLE "traffic_reset_sweeps" (
              "id" boolean NOT NULL DEFAULT true,
              "swept_until" timestamptz NOT NULL,
              CONSTRAINT "PK_traffic_reset_sweeps" PRIMARY KEY ("id"),
              CONSTRAINT "CHK_traffic_reset_sweeps_one_row" CHECK ("id")
          )
      `);
    await queryRunner.query(`
          CREATE FUNCTION "users_next_reset_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
              IF NEW.traffic_reset_at IS NULL OR ${AT_MIDNIGHT('NEW.traffic_reset_at')} THEN
                  DELETE FROM next_traffic_resets WHERE user_id = NEW.id;
              ELSE
                  INSERT INTO next_traffic_resets (user_id, reset_at)
                  VALUES (NEW.id, NEW.traffic_reset_at)
                  ON CONFLICT (user_id) DO UPDATE SET reset_at = EXCLUDED.reset_at;
              END IF;
              RETURN NULL;
          END
          $$
      `);
    // Only statements that set the column: the traffic reports' updates never wake it.
    await queryRunner.query(`
          CREATE TRIGGER "TRG_users_next_reset_update" AFTER UPDATE OF traffic_reset_at ON "users"
          FOR EACH ROW WHEN (
              OLD.traffic_reset_at IS DISTINCT FROM NEW.traffic_reset_at
              AND current_setting('vpn.resets_recorded', true) IS DISTINCT FROM 'on'
          )
          EXECUTE FUNCTION users_next_reset_changed()
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_users_next_reset_insert" AFTER INSERT ON "users"
          FOR EACH ROW WHEN (
              NEW.traffic_reset_at IS NOT NULL AND NOT ${AT_MIDNIGHT('NEW.traffic_reset_at')}
          )
          EXECUTE FUNCTION users_next_reset_changed()
      `);
    // After the triggers: creating them waited for every write of `users` in flight and holds off
    // new ones until this migration commits, so the rows below miss none.
    await queryRunner.query(
      `INSERT INTO "next_traffic_resets" ("user_id", "reset_at")
       SELECT "id", "traffic_reset_at" FROM "users"
        WHERE "traffic_reset_at" IS NOT NULL AND NOT ${AT_MIDNIGHT('"traffic_reset_at"')}`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_users_next_reset_insert" ON "users"`);
    await queryRunner.query(`DROP TRIGGER "TRG_users_next_reset_update" ON "users"`);
    await queryRunner.query(`DROP FUNCTION "users_next_reset_changed"()`);
    await queryRunner.query(`DROP TABLE "traffic_reset_sweeps"`);
    await queryRunner.query(`DROP TABLE "next_traffic_resets"`);
  }
}
