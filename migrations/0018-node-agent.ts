import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the node agent needs of each node: its admission port, its TLS certificate and sealed key,
 * and the node's own secret (sealed, and its SHA-256 for lookup). Existing nodes get the
 * certificate and the secret at their next provisioning (the key material is sealed under
 * DATA_ENCRYPTION_KEY, which SQL does not have); a node on tunnel port 8443 gets admission port
 * 8444, since the two must differ.
 */
export class NodeAgent0018 implements MigrationInterface {
  name = 'NodeAgent0000000000018';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          ALTER TABLE "nodes"
          ADD "admission_port" integer NOT NULL DEFAULT '8443',
          ADD "admission_cert_pem" text,
          ADD "admission_cert_sha256" text,
          ADD "admission_key_enc" text,
          ADD "agent_secret_enc" text,
          ADD "agent_secret_sha256" text
      `);
    await queryRunner.query(`
          UPDATE "nodes" SET "admission_port" = 8444 WHERE "tunnel_port" = 8443
      `);
    await queryRunner.query(`
          CREATE UNIQUE INDEX "IDX_nodes_agent_secret" ON "nodes" ("agent_secret_sha256")
          WHERE agent_secret_sha256 IS NOT NULL
      `);
    await queryRunner.query(`
          ALTER TABLE "nodes"
          ADD CONSTRAINT "CHK_nodes_admission_not_tunnel" CHECK (admission_port <> tunnel_port)
      `);
    await queryRunner.query(`
          ALTER TABLE "nodes"
          ADD CONSTRAINT "CHK_nodes_admission_port" CHECK (
              admission_port BETWEEN 1 AND 65535
          )
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          ALTER TABLE "nodes" DROP CONSTRAINT "CHK_nodes_admission_port"
      `);
    await queryRunner.query(`
          ALTER TABLE "nodes" DROP CONSTRAINT "CHK_nodes_admission_not_tunnel"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_nodes_agent_secret"
      `);
    await queryRunner.query(`
          ALTER TABLE "nodes"
          DROP COLUMN "agent_secret_sha256",
          DROP COLUMN "agent_secret_enc",
          DROP COLUMN "admission_key_enc",
          DROP COLUMN "admission_cert_sha256",
          DROP COLUMN "admission_cert_pem",
          DROP COLUMN "admission_port"
      `);
  }
}
