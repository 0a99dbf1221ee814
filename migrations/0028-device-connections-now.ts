import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A traffic batch read its devices' connections in a statement of its own, after the statement
 * that locks the devices: a statement that waited for a device's lock sees only rows committed
 * before it started, and the batch it waited for has just written that device's connection.
 * `device_connections` reads them with a snapshot taken when it runs (each statement of a volatile
 * function takes its own), so the lock statement answers them too, after its last lock: one round
 * trip fewer a batch.
 */
export class DeviceConnectionsNow0028 implements MigrationInterface {
  name = 'DeviceConnectionsNow0000000000028';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE FUNCTION "device_connections"(ids uuid[])
          RETURNS TABLE (device_id uuid, node_id uuid, address text, since timestamptz, seen_at timestamptz)
          LANGUAGE plpgsql VOLATILE AS $$
          BEGIN
              RETURN QUERY
              SELECT p.device_id, p.node_id, host(p.address), p.since, p.seen_at
                FROM device_presence p WHERE p.device_id = ANY(ids);
          END
          $$
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION "device_connections"(uuid[])`);
  }
}
