import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Devices and the subscription link. Each device of an account is one VLESS id on every node of
 * the account's routing share; nodes keep their set up to date from `credential_changes`, a log of
 * the users whose devices a node may have to add or remove, numbered by `credentials_version`.
 *
 * The counter is a row, not a sequence (as `routing_version`): a writer holds it until it commits,
 * so versions become visible in their order and a node that read up to version N never later
 * finds a change numbered below N. Triggers record every change that moves a device in or out of
 * a node's set (a device made or removed; a user's subscription, block, plan or limit changed;
 * used traffic set back), so no code path can forget to; the traffic batch records the users it
 * takes over their limit itself (`record_credential_changes`), as a trigger on every counter
 * update would cost every report.
 *
 * `share_bucket` is 12 bits of the user id (`src/devices/share.ts`): a user's routing share is
 * chosen per bucket, so the users a node carries are found through an index on it.
 */
export class Devices0021 implements MigrationInterface {
  name = 'Devices0000000000021';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
          CREATE FUNCTION "share_bucket_of"(user_id uuid) RETURNS int
          LANGUAGE sql IMMUTABLE PARALLEL SAFE
          RETURN ('x' || substr(user_id::text, 1, 3))::bit(12)::int
      `);
    await queryRunner.query(
      `ALTER TABLE "plans" ADD "device_limit" integer,
         ADD CONSTRAINT "CHK_plans_device_limit" CHECK (device_limit BETWEEN 1 AND 20)`,
    );
    await queryRunner.query(`
          CREATE TABLE "devices" (
              "id" uuid NOT NULL DEFAULT gen_random_uuid(),
              "user_id" uuid NOT NULL,
              "share_bucket" smallint NOT NULL,
              "vless_id" uuid NOT NULL DEFAULT gen_random_uuid(),
              "name" text NOT NULL,
              "source" text NOT NULL,
              "hwid_sha256" bytea,
              "app" text,
              "client" text,
              "created_at" timestamptz NOT NULL DEFAULT now(),
              "last_fetch_at" timestamptz,
              "last_seen_at" timestamptz,
              "last_node_id" uuid,
              "address_hint" text,
              "bytes_up" bigint NOT NULL DEFAULT 0,
              "bytes_down" bigint NOT NULL DEFAULT 0,
              "switches" integer NOT NULL DEFAULT 0,
              "switches_since" timestamptz,
              CONSTRAINT "PK_devices" PRIMARY KEY ("id"),
              CONSTRAINT "FK_devices_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE,
              CONSTRAINT "FK_devices_last_node" FOREIGN KEY ("last_node_id") REFERENCES "nodes"("id") ON DELETE SET NULL,
              CONSTRAINT "CHK_devices_share_bucket" CHECK (share_bucket = share_bucket_of(user_id)),
              CONSTRAINT "CHK_devices_source" CHECK (source IN ('hwid', 'app', 'link')),
              CONSTRAINT "CHK_devices_hwid" CHECK ((source = 'hwid') = (hwid_sha256 IS NOT NULL)),
              CONSTRAINT "CHK_devices_app" CHECK ((source = 'app') = (app IS NOT NULL)),
              CONSTRAINT "CHK_devices_bytes" CHECK (bytes_up >= 0 AND bytes_down >= 0)
          )
      `);
    await queryRunner.query(`CREATE UNIQUE INDEX "UQ_devices_vless_id" ON "devices" ("vless_id")`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_devices_user_hwid" ON "devices" ("user_id", "hwid_sha256") WHERE hwid_sha256 IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_devices_user_app" ON "devices" ("user_id", "app") WHERE app IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_devices_user" ON "devices" ("user_id", "created_at", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_devices_share_bucket" ON "devices" ("share_bucket")`,
    );

    await queryRunner.query(`
          CREATE TABLE "subscription_links" (
              "token_sha256" bytea NOT NULL,
              "user_id" uuid NOT NULL,
              "device_id" uuid,
              "version" integer NOT NULL DEFAULT 0,
              "created_at" timestamptz NOT NULL DEFAULT now(),
              CONSTRAINT "PK_subscription_links" PRIMARY KEY ("token_sha256"),
              CONSTRAINT "FK_subscription_links_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE,
              CONSTRAINT "FK_subscription_links_device" FOREIGN KEY ("device_id") REFERENCES "devices"("id") ON DELETE CASCADE
          )
      `);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_subscription_links_account" ON "subscription_links" ("user_id") WHERE device_id IS NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_subscription_links_device" ON "subscription_links" ("device_id") WHERE device_id IS NOT NULL`,
    );

    await queryRunner.query(`
          CREATE TABLE "credentials_version" (
              "id" boolean PRIMARY KEY DEFAULT true CHECK (id),
              "version" bigint NOT NULL,
              "full_from" bigint NOT NULL
          )
      `);
    await queryRunner.query(
      `INSERT INTO "credentials_version" (id, version, full_from) VALUES (true, 1, 1)`,
    );
    await queryRunner.query(`
          CREATE TABLE "credential_changes" (
              "version" bigint NOT NULL,
              "user_id" uuid NOT NULL,
              "share_bucket" smallint NOT NULL,
              "removed_device_id" uuid,
              "created_at" timestamptz NOT NULL DEFAULT now(),
              CONSTRAINT "PK_credential_changes" PRIMARY KEY ("version")
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "node_credential_shares" (
              "node_id" uuid NOT NULL,
              "share_hash" text NOT NULL,
              "since_version" bigint NOT NULL,
              CONSTRAINT "PK_node_credential_shares" PRIMARY KEY ("node_id"),
              CONSTRAINT "FK_node_credential_shares_node" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE
          )
      `);
    await queryRunner.query(`
          CREATE TABLE "device_presence" (
              "device_id" uuid NOT NULL,
              "node_id" uuid NOT NULL,
              "address" inet NOT NULL,
              "since" timestamptz NOT NULL,
              "seen_at" timestamptz NOT NULL DEFAULT now(),
              CONSTRAINT "PK_device_presence" PRIMARY KEY ("device_id"),
              CONSTRAINT "FK_device_presence_device" FOREIGN KEY ("device_id") REFERENCES "devices"("id") ON DELETE CASCADE,
              CONSTRAINT "FK_device_presence_node" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE
          )
      `);

    // users[i] changed; removed[i] (or null) is a device of it that no longer exists.
    await queryRunner.query(`
          CREATE FUNCTION "record_credential_changes"(users uuid[], removed uuid[])
          RETURNS void LANGUAGE plpgsql AS $$
          DECLARE
              n int := COALESCE(cardinality(users), 0);
              top bigint;
          BEGIN
              IF n = 0 THEN RETURN; END IF;
              UPDATE credentials_version SET version = version + n RETURNING version INTO top;
              INSERT INTO credential_changes (version, user_id, share_bucket, removed_device_id)
              SELECT top - n + x.o, x.u, share_bucket_of(x.u), x.r
                FROM unnest(users, removed) WITH ORDINALITY AS x(u, r, o)
               WHERE x.u IS NOT NULL;
          END
          $$
      `);
    await queryRunner.query(`
          CREATE FUNCTION "devices_credentials_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
              IF TG_OP = 'DELETE' THEN
                  PERFORM record_credential_changes(ARRAY[OLD.user_id], ARRAY[OLD.id]);
              ELSE
                  PERFORM record_credential_changes(ARRAY[NEW.user_id], ARRAY[NULL::uuid]);
              END IF;
              RETURN NULL;
          END
          $$
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_devices_credentials" AFTER INSERT OR DELETE OR UPDATE OF vless_id
          ON "devices" FOR EACH ROW EXECUTE FUNCTION devices_credentials_changed()
      `);
    await queryRunner.query(`
          CREATE FUNCTION "users_credentials_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
              PERFORM record_credential_changes(ARRAY[NEW.id], ARRAY[NULL::uuid]);
              RETURN NULL;
          END
          $$
      `);
    // Not on traffic added (the batch records the users it takes over their limit itself).
    await queryRunner.query(`
          CREATE TRIGGER "TRG_users_credentials" AFTER UPDATE ON "users"
          FOR EACH ROW WHEN (
              (OLD.subscription_expires_at, OLD.blocked_at, OLD.plan_name, OLD.traffic_limit_bytes)
              IS DISTINCT FROM
              (NEW.subscription_expires_at, NEW.blocked_at, NEW.plan_name, NEW.traffic_limit_bytes)
              OR NEW.traffic_used_bytes < OLD.traffic_used_bytes
          )
          EXECUTE FUNCTION users_credentials_changed()
      `);
    await queryRunner.query(`
          CREATE FUNCTION "plans_credentials_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
          DECLARE members uuid[];
          BEGIN
              SELECT array_agg(id) INTO members FROM users WHERE plan_name = NEW.name;
              IF members IS NULL THEN RETURN NULL; END IF;
              PERFORM record_credential_changes(members, array_fill(NULL::uuid, ARRAY[cardinality(members)]));
              RETURN NULL;
          END
          $$
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_plans_credentials" AFTER UPDATE ON "plans"
          FOR EACH ROW WHEN (
              (OLD.device_limit, OLD.traffic_limit_bytes) IS DISTINCT FROM (NEW.device_limit, NEW.traffic_limit_bytes)
          )
          EXECUTE FUNCTION plans_credentials_changed()
      `);
    // The default traffic limit concerns every user without a limit of their own: every node
    // takes its whole set again rather than a change per user.
    await queryRunner.query(`
          CREATE FUNCTION "settings_credentials_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
              UPDATE credentials_version SET version = version + 1, full_from = version + 1;
              RETURN NULL;
          END
          $$
      `);
    await queryRunner.query(`
          CREATE TRIGGER "TRG_app_settings_credentials" AFTER INSERT OR UPDATE OR DELETE ON "app_settings"
          FOR EACH STATEMENT EXECUTE FUNCTION settings_credentials_changed()
      `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_app_settings_credentials" ON "app_settings"`);
    await queryRunner.query(`DROP FUNCTION "settings_credentials_changed"()`);
    await queryRunner.query(`DROP TRIGGER "TRG_plans_credentials" ON "plans"`);
    await queryRunner.query(`DROP FUNCTION "plans_credentials_changed"()`);
    await queryRunner.query(`DROP TRIGGER "TRG_users_credentials" ON "users"`);
    await queryRunner.query(`DROP FUNCTION "users_credentials_changed"()`);
    await queryRunner.query(`DROP TABLE "device_presence"`);
    await queryRunner.query(`DROP TABLE "node_credential_shares"`);
    await queryRunner.query(`DROP TABLE "credential_changes"`);
    await queryRunner.query(`DROP TABLE "credentials_version"`);
    await queryRunner.query(`DROP TABLE "subscription_links"`);
    await queryRunner.query(`DROP TABLE "devices"`);
    await queryRunner.query(`DROP FUNCTION "devices_credentials_changed"()`);
    await queryRunner.query(`DROP FUNCTION "record_credential_changes"(uuid[], uuid[])`);
    await queryRunner.query(
      `ALTER TABLE "plans" DROP CONSTRAINT "CHK_plans_device_limit", DROP COLUMN "device_limit"`,
    );
    await queryRunner.query(`DROP FUNCTION "share_bucket_of"(uuid)`);
  }
}
