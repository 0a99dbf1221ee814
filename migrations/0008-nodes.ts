import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tunnel nodes (secrets sealed, soft delete). */
export class Nodes0008 implements MigrationInterface {
  name = 'Nodes0000000000008';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "nodes" (
              "id" uuid NOT NULL DEFAULT gen_random_uuid(),
              "name" text NOT NULL,
              "host" text NOT NULL,
              "ssh_port" integer NOT NULL DEFAULT '22',
              "ssh_user" text NOT NULL DEFAULT 'root',
              "ssh_private_key_enc" text NOT NULL,
              "ssh_host_key_sha256" text,
              "tunnel_port" integer NOT NULL DEFAULT '443',
              "tunnel_protocol" text NOT NULL DEFAULT 'vless',
              "tunnel_flow" text NOT NULL DEFAULT 'xtls-rprx-vision',
              "short_ids" text array NOT NULL,
              "public_key" text NOT NULL,
              "reality_private_key_enc" text NOT NULL,
              "sni_domain" text NOT NULL,
              "traffic_multiplier" numeric(6, 3) NOT NULL DEFAULT '1',
              "status" text NOT NULL DEFAULT 'unknown',
              "provision_state" text NOT NULL DEFAULT 'new',
              "provision_started_at" TIMESTAMP WITH TIME ZONE,
              "last_error" text,
              "last_checked_at" TIMESTAMP WITH TIME ZONE,
              "last_report_at" TIMESTAMP WITH TIME ZONE,
              "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              "deleted_at" TIMESTAMP WITH TIME ZONE,
              CONSTRAINT "CHK_nodes_traffic_multiplier" CHECK (
                  traffic_multiplier >= 0.1
                  AND traffic_multiplier <= 10
              ),
              CONSTRAINT "CHK_nodes_tunnel_port" CHECK (
                  tunnel_port BETWEEN 1 AND 65535
              ),
              CONSTRAINT "CHK_nodes_ssh_port" CHECK (
                  ssh_port BETWEEN 1 AND 65535
              ),
              CONSTRAINT "CHK_nodes_provision_state" CHECK (
                  provision_state IN ('new', 'provisioning', 'ready', 'failed')
              ),
              CONSTRAINT "CHK_nodes_status" CHECK (status IN ('online', 'offline', 'unknown')),
              CONSTRAINT "PK_682d6427523a0fa43d062ea03ee" PRIMARY KEY ("id")
          )
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_nodes_created_at" ON "nodes" ("created_at", "id")
          WHERE deleted_at IS NULL
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_nodes_routing" ON "nodes" ("name", "id")
          WHERE deleted_at IS NULL
              AND status = 'online'
              AND provision_state = 'ready'
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          DROP INDEX "public"."IDX_nodes_routing"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_nodes_created_at"
      `);
    await queryRunner.query(`
          DROP TABLE "nodes"
      `);
  }
}
