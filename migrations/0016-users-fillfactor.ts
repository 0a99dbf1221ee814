import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Room on each page of `users` for new row versions. Every traffic report rewrites the counters of
 * thousands of users; with full pages each new version lands on another page and all seven indexes
 * get an entry (about 36 µs a row). With room on the page, and no indexed column changed, the
 * update is HOT: the indexes are left alone (about 5 µs a row). Pages written from now on keep
 * the room; existing ones gain it as vacuum frees them.
 */
export class UsersFillfactor0016 implements MigrationInterface {
  name = 'UsersFillfactor0000000000016';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "users" SET (fillfactor = 70)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "users" RESET (fillfactor)`);
  }
}
