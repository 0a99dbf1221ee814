import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Devices added or deleted are recorded as credential changes once per statement instead of once
 * per row (0021's row trigger stays for a device's new VLESS id). Each record moves the one-row
 * counter `credentials_version`, and a transaction that moves it many times leaves the table as
 * many pages long as the row versions it made: VACUUM frees them but cannot shorten the file past
 * the live row, often on its last page. A fleet's bulk load of 200,000 devices left 1,280 pages,
 * which each node's credential poll then read (1.2 ms of PostgreSQL's CPU a poll, bench/RESULTS.md,
 * issue 46); and each of those moves scanned the pages made before it in that transaction. Now a
 * statement that adds or deletes any number of devices (an import, an account's deletion
 * cascading to its devices) moves the counter once, by as many versions as it has devices.
 */
export class DeviceChangesPerStatement0029 implements MigrationInterface {
  name = 'DeviceChangesPerStatement0000000000029';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_devices_credentials" ON "devices"`);
    // `array_agg` of no rows is null, which records nothing; its two aggregates read the rows in
    // the same order, so each removed id stays beside its user.
    await queryRunner.query(`
          CREATE FUNCTION "devices_added_credentials"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
              PERFORM record_credential_changes(array_agg(user_id), array_agg(NULL::uuid)) FROM added;
              RETURN NULL;
          END
          $$
      `);
    await queryRunner.query(`
          CREATE FUNCTION "devices_removed_credentials"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
              PERFORM record_credential_changes(array_agg(user_id), array_agg(id)) FROM removed;
              RETURN NULL;
          END
          $$
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_devices_credentials_insert" AFTER INSERT ON "devices"
          REFERENCING NEW TABLE AS added
          FOR EACH STATEMENT EXECUTE FUNCTION devices_added_credentials()
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_devices_credentials_delete" AFTER DELETE ON "devices"
          REFERENCING OLD TABLE AS removed
          FOR EACH STATEMENT EXECUTE FUNCTION devices_removed_credentials()
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_devices_credentials" AFTER UPDATE OF vless_id
          ON "devices" FOR EACH ROW EXECUTE FUNCTION devices_credentials_changed()
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_devices_credentials" ON "devices"`);
    await queryRunner.query(`DROP TRIGGER "TRG_devices_credentials_delete" ON "devices"`);
    await queryRunner.query(`DROP TRIGGER "TRG_devices_credentials_insert" ON "devices"`);
    await queryRunner.query(`DROP FUNCTION "devices_removed_credentials"()`);
    await queryRunner.query(`DROP FUNCTION "devices_added_credentials"()`);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_devices_credentials" AFTER INSERT OR DELETE OR UPDATE OF vless_id
          ON "devices" FOR EACH ROW EXECUTE FUNCTION devices_credentials_changed()
      `);
  }
}
