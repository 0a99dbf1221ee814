import type { MigrationInterface, QueryRunner } from 'typeorm';

const ROUTING_COLUMNS = [
  'name',
  'host',
  'tunnel_port',
  'tunnel_protocol',
  'tunnel_flow',
  'short_ids',
  'public_key',
  'sni_domain',
  'admission_port',
  'admission_cert_sha256',
  'status',
  'provision_state',
  'deleted_at',
];

function updateTrigger(columns: string[]): string {
  const list = (side: string) => columns.map((column) => `${side}.${column}`).join(', ');
  return `
          CREATE TRIGGER "TRG_nodes_routing_update" AFTER UPDATE ON "nodes"
          FOR EACH ROW WHEN ((${list('OLD')}) IS DISTINCT FROM (${list('NEW')}))
          EXECUTE FUNCTION routing_version_bump()
      `;
}

/**
 * The routing counter (0019) also moves when a node's agent secret is replaced: instances keep the
 * node a secret belongs to for as long as the counter stands still (`NodeSecretLookup`), so a
 * replaced secret, like a deleted node, is refused everywhere within a second.
 */
export class NodeSecretVersion0020 implements MigrationInterface {
  name = 'NodeSecretVersion0000000000020';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_nodes_routing_update" ON "nodes"`);
    await queryRunner.query(updateTrigger([...ROUTING_COLUMNS, 'agent_secret_sha256']));
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_nodes_routing_update" ON "nodes"`);
    await queryRunner.query(updateTrigger(ROUTING_COLUMNS));
  }
}
