import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The proxy's interface: spent session-token ids (until they expire), applied traffic reports (a
 * repeat counts nothing) and the raw bytes each node reported per day.
 */
export class InternalTraffic0009 implements MigrationInterface {
  name = 'InternalTraffic0000000000009';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE TABLE "node_traffic_days" (
              "node_id" uuid NOT NULL,
              "day" date NOT NULL,
              "bytes_up" numeric(30, 0) NOT NULL DEFAULT '0',
              "bytes_down" numeric(30, 0) NOT NULL DEFAULT '0',
              "bytes_counted" numeric(30, 0) NOT NULL DEFAULT '0',
              CONSTRAINT "PK_07019605596a1a8438ad25be1e1" PRIMARY KEY ("node_id", "day")
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "traffic_reports" (
              "node_id" uuid NOT NULL,
              "report_id" uuid NOT NULL,
              "entries" integer NOT NULL,
              "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
              CONSTRAINT "PK_a969daa17b263f95192df8c3fd2" PRIMARY KEY ("node_id", "report_id")
          )
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_traffic_reports_received_at" ON "traffic_reports" ("received_at")
      `);
    await queryRunner.query(`
          CREATE TABLE "used_session_tokens" (
              "jti" uuid NOT NULL,
              "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
              CONSTRAINT "PK_6ea3dbd315f4332ef45dac1a0fe" PRIMARY KEY ("jti")
          )
      `);
    await queryRunner.query(`
          CREATE INDEX "IDX_used_session_tokens_expires_at" ON "used_session_tokens" ("expires_at")
      `);
    await queryRunner.query(`
          ALTER TABLE "node_traffic_days"
          ADD CONSTRAINT "FK_88c5e48e634cefb863b2041148d" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      `);
    await queryRunner.query(`
          ALTER TABLE "traffic_reports"
          ADD CONSTRAINT "FK_d9c0efef94fc4154a12442aad1d" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          ALTER TABLE "traffic_reports" DROP CONSTRAINT "FK_d9c0efef94fc4154a12442aad1d"
      `);
    await queryRunner.query(`
          ALTER TABLE "node_traffic_days" DROP CONSTRAINT "FK_88c5e48e634cefb863b2041148d"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_used_session_tokens_expires_at"
      `);
    await queryRunner.query(`
          DROP TABLE "used_session_tokens"
      `);
    await queryRunner.query(`
          DROP INDEX "public"."IDX_traffic_reports_received_at"
      `);
    await queryRunner.query(`
          DROP TABLE "traffic_reports"
      `);
    await queryRunner.query(`
          DROP TABLE "node_traffic_days"
      `);
  }
}
