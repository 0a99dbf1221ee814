import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Room on each page of `devices` and `nodes` for new row versions, as 0016 gave `users`. Every
 * traffic report rewrites the counters and last sighting of each of its devices, and the stamp of
 * its node; the health check stamps every node it probes. With full pages a new version lands on
 * another page and every index gets an entry (six on `devices`, four on `nodes`): at full scale
 * (bench:fleet) 27 % of the devices' updates and 59 % of the nodes' were of that kind, 2.6 % and
 * 10 % with the room. With room on the page, and no indexed column changed, the update is HOT and
 * the indexes are left alone. Pages written from now on keep the room; existing ones gain it as
 * vacuum frees them.
 */
export class DevicesFillfactor0030 implements MigrationInterface {
  name = 'DevicesFillfactor0000000000030';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "devices" SET (fillfactor = 70)`);
    await queryRunner.query(`ALTER TABLE "nodes" SET (fillfactor = 70)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "nodes" RESET (fillfactor)`);
    await queryRunner.query(`ALTER TABLE "devices" RESET (fillfactor)`);
  }
}
