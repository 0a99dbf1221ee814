import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A counter of changes to what routing answers: a trigger adds one whenever a node is added,
 * deleted, or changes a column the routing list shows or filters on (not the health check's
 * `last_checked_at` nor a report's `last_report_at`). Routing reads the counter, a one-row read,
 * and reads the node list again only when it moved, instead of every node row on every connect.
 * The counter is a row, not a sequence, so that it moves when the change commits, not before.
 */
export class RoutingVersion0019 implements MigrationInterface {
  name = 'RoutingVersion0000000000019';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "routing_version" (
              "id" boolean PRIMARY KEY DEFAULT true CHECK (id),
              "version" bigint NOT NULL
          )
      `);
    await queryRunner.query(`INSERT INTO "routing_version" (id, version) VALUES (true, 1)`);
    await queryRunner.query(`
          CREATE FUNCTION "routing_version_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
              UPDATE routing_version SET version = version + 1;
              RETURN NULL;
          END
          $$
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_nodes_routing_insert_delete" AFTER INSERT OR DELETE ON "nodes"
          FOR EACH STATEMENT EXECUTE FUNCTION routing_version_bump()
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_nodes_routing_update" AFTER UPDATE ON "nodes"
          FOR EACH ROW WHEN (
              (OLD.name, OLD.host, OLD.tunnel_port, OLD.tunnel_protocol, OLD.tunnel_flow,
               OLD.short_ids, OLD.public_key, OLD.sni_domain, OLD.admission_port,
               OLD.admission_cert_sha256, OLD.status, OLD.provision_state, OLD.deleted_at)
              IS DISTINCT FROM
              (NEW.name, NEW.host, NEW.tunnel_port, NEW.tunnel_protocol, NEW.tunnel_flow,
               NEW.short_ids, NEW.public_key, NEW.sni_domain, NEW.admission_port,
               NEW.admission_cert_sha256, NEW.status, NEW.provision_state, NEW.deleted_at)
          )
          EXECUTE FUNCTION routing_version_bump()
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_nodes_routing_update" ON "nodes"`);
    await queryRunner.query(`DROP TRIGGER "TRG_nodes_routing_insert_delete" ON "nodes"`);
    await queryRunner.query(`DROP FUNCTION "routing_version_bump"()`);
    await queryRunner.query(`DROP TABLE "routing_version"`);
  }
}
