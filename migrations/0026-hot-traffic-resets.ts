import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The reset job changes `traffic_reset_at` on every user it resets; with that column indexed, each
 * change wrote a new entry into every index of `users` (eight of them), where an update of columns
 * no index holds stays on its page (a HOT update, which `users`' fill factor leaves room for): 2.5 to
 * 4 times the work per user. The job now sweeps users by ranges of their primary key and finds the
 * due ones by this column within each range (`RESET_DUE_SQL`), so the index has no reader left.
 */
export class HotTrafficResets0026 implements MigrationInterface {
  name = 'HotTrafficResets0000000000026';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_users_traffic_reset_at"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "IDX_users_traffic_reset_at" ON "users" ("traffic_reset_at") WHERE traffic_reset_at IS NOT NULL`,
    );
  }
}
