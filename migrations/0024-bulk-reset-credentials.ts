import type { MigrationInterface, QueryRunner } from 'typeorm';

const COLUMNS = `(OLD.subscription_expires_at, OLD.blocked_at, OLD.plan_name, OLD.traffic_limit_bytes)
              IS DISTINCT FROM
              (NEW.subscription_expires_at, NEW.blocked_at, NEW.plan_name, NEW.traffic_limit_bytes)`;

/**
 * The traffic-reset job records the credential changes of a whole batch itself, in its one
 * statement (one counter move and one insert for up to 1,000 users), instead of 0021's row trigger
 * doing both for each user: that trigger was two thirds of the job's time. The statement says so
 * with the transaction-local setting `vpn.resets_recorded`; a used-traffic decrease under it is
 * left to the statement, every other change still goes through the trigger.
 */
export class BulkResetCredentials0024 implements MigrationInterface {
  name = 'BulkResetCredentials0000000000024';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_users_credentials" ON "users"`);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_users_credentials" AFTER UPDATE ON "users"
          FOR EACH ROW WHEN (
              ${COLUMNS}
              OR (NEW.traffic_used_bytes < OLD.traffic_used_bytes
                  AND current_setting('vpn.resets_recorded', true) IS DISTINCT FROM 'on')
          )
          EXECUTE FUNCTION users_credentials_changed()
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_users_credentials" ON "users"`);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_users_credentials" AFTER UPDATE ON "users"
          FOR EACH ROW WHEN (${COLUMNS} OR NEW.traffic_used_bytes < OLD.traffic_used_bytes)
          EXECUTE FUNCTION users_credentials_changed()
      `);
  }
}
