import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { preparedRows, sqlRows } from '../database/sql';
import type { LoggedChange } from './change-log-cache';
import { ROUTING_VERSION_SQL } from '../nodes/nodes.repository';
import { subscriptionActiveSql } from '../users/subscription-active';
import { defaultLimitSql, OVER_LIMIT_SQL } from '../users/traffic-limit';

/** The change counter: the last version, and the first a node must have had to go on from. */
export interface CredentialsVersion {
  version: number;
  /** A node whose version is below this takes its whole set again (the log before it is gone). */
  fullFrom: number;
}

/** A device as a node carries it, and whether it should carry it now. */
export interface CredentialRow {
  deviceId: string;
  userId: string;
  vlessId: string;
  expiresAt: Date | null;
  carried: boolean;
}

/** Which devices: those of these buckets, of these users, or every device (`null`). */
export type CredentialScope = { buckets: number[] } | { users: string[] } | null;

/**
 * Whether a node carries device `dv` of user `u` (plan `p`, default traffic limit `d`): the account is not
 * blocked, its subscription runs, it is under its traffic limit, and the device is among the
 * account's first `device_limit` (oldest first).
 */
const CARRIED_SQL = (deviceLimit: string): string =>
  `${subscriptionActiveSql('u')} AND NOT (${OVER_LIMIT_SQL})
   AND row_number() OVER (PARTITION BY dv.user_id ORDER BY dv.created_at, dv.id)
       <= COALESCE(p.device_limit, ${deviceLimit})`;

/**
 * The credentials counter and the routing counter, each read by its key. A transaction that moves
 * a one-row counter many times (a mass update of accounts, whose row trigger records each one)
 * leaves its table as many pages long as the row versions it made, and VACUUM cannot shorten it
 * past the live row: a scan would read every page at each node's poll (1.2 ms of PostgreSQL's CPU
 * a poll after a fleet's bulk load of 200,000 devices, before migration 0029).
 */
export const CREDENTIALS_VERSION_SQL = `SELECT c.version::text, c.full_from::text AS "fullFrom",
       (SELECT version::text FROM (${ROUTING_VERSION_SQL}) r) AS routing
  FROM credentials_version c WHERE c.id`;

/**
 * The owner of `credentials_version`, `credential_changes` and `node_credential_shares`: the log
 * nodes keep their device sets by (migration 0021 writes the log from triggers).
 */
@Injectable()
export class CredentialsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** The counter, and the routing counter read in the same statement (`routing_version`). */
  async version(): Promise<CredentialsVersion & { routing: string }> {
    const [row] = await preparedRows<{ version: string; fullFrom: string; routing: string }>(
      this.txHost.tx,
      CREDENTIALS_VERSION_SQL,
      [],
    );
    return { version: Number(row.version), fullFrom: Number(row.fullFrom), routing: row.routing };
  }

  /** Moves the counter with no change of its own: nodes are told to ask (their share moved). */
  async bump(): Promise<number> {
    const [row] = await sqlRows<{ version: string }>(
      this.txHost.tx,
      `UPDATE credentials_version SET version = version + 1 RETURNING version::text`,
    );
    return Number(row.version);
  }

  /** Records that these users' devices may have changed (in the caller's transaction). */
  async recordUsers(userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    await sqlRows(
      this.txHost.tx,
      `SELECT record_credential_changes($1::uuid[], array_fill(NULL::uuid, ARRAY[$2::int]))`,
      [userIds, userIds.length],
    );
  }

  /**
   * The users changed in `(since, upTo]` of the buckets (all when null), and the devices removed
   * among those changes.
   */
  async changes(
    since: number,
    upTo: number,
    buckets: number[] | null,
  ): Promise<{ users: string[]; removed: string[] }> {
    const [row] = await sqlRows<{ users: string[] | null; removed: string[] | null }>(
      this.txHost.tx,
      `SELECT array_agg(DISTINCT user_id) AS users,
              array_agg(removed_device_id) FILTER (WHERE removed_device_id IS NOT NULL) AS removed
         FROM credential_changes
        WHERE version > $1 AND version <= $2 AND ($3::int[] IS NULL OR share_bucket = ANY($3))`,
      [since, upTo, buckets],
    );
    return { users: row?.users ?? [], removed: row?.removed ?? [] };
  }

  /** The changes numbered in `(after, upTo]`, each with its user's bucket, in ascending versions. */
  async loggedChanges(after: number, upTo: number): Promise<LoggedChange[]> {
    const rows = await preparedRows<{ version: string; bucket: number }>(
      this.txHost.tx,
      `SELECT version::text, share_bucket AS bucket FROM credential_changes
        WHERE version > $1 AND version <= $2 ORDER BY version`,
      [after, upTo],
    );
    return rows.map((row) => ({ version: Number(row.version), bucket: row.bucket }));
  }

  /** The buckets changed in `(since, upTo]`. */
  async changedBuckets(since: number, upTo: number): Promise<number[]> {
    const rows = await sqlRows<{ bucket: number }>(
      this.txHost.tx,
      `SELECT DISTINCT share_bucket AS bucket FROM credential_changes
        WHERE version > $1 AND version <= $2`,
      [since, upTo],
    );
    return rows.map((row) => row.bucket);
  }

  /**
   * The devices in scope with whether a node carries each now; `deviceLimit` and
   * `defaultTrafficLimit` are the settings' defaults.
   */
  credentials(
    scope: CredentialScope,
    deviceLimit: number,
    defaultTrafficLimit: bigint,
  ): Promise<CredentialRow[]> {
    const where =
      scope === null
        ? ''
        : 'buckets' in scope
          ? 'WHERE dv.share_bucket = ANY($3::int[])'
          : 'WHERE dv.user_id = ANY($3::uuid[])';
    const params: unknown[] = [deviceLimit, defaultTrafficLimit.toString()];
    if (scope !== null) params.push('buckets' in scope ? scope.buckets : scope.users);
    return sqlRows<CredentialRow>(
      this.txHost.tx,
      `SELECT dv.id AS "deviceId", dv.user_id AS "userId", dv.vless_id AS "vlessId",
              u.subscription_expires_at AS "expiresAt", ${CARRIED_SQL('$1::int')} AS carried
         FROM devices dv JOIN users u ON u.id = dv.user_id
         LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${defaultLimitSql('$2')}
        ${where}`,
      params,
    );
  }

  /** The share a node was last answered for, and the version from which it holds. */
  async nodeShare(nodeId: string): Promise<{ hash: string; sinceVersion: number } | null> {
    const [row] = await sqlRows<{ hash: string; sinceVersion: string }>(
      this.txHost.tx,
      `SELECT share_hash AS hash, since_version::text AS "sinceVersion"
         FROM node_credential_shares WHERE node_id = $1`,
      [nodeId],
    );
    return row ? { hash: row.hash, sinceVersion: Number(row.sinceVersion) } : null;
  }

  async saveNodeShare(nodeId: string, hash: string, sinceVersion: number): Promise<void> {
    await sqlRows(
      this.txHost.tx,
      `INSERT INTO node_credential_shares (node_id, share_hash, since_version)
       SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM nodes WHERE id = $1)
       ON CONFLICT (node_id) DO UPDATE SET share_hash = $2, since_version = $3`,
      [nodeId, hash, sinceVersion],
    );
  }

  /**
   * Forgets changes older than `days`; a node that had not read up to them takes its whole set
   * next time. How many were deleted.
   */
  async forgetOlderThan(days: number, batch: number): Promise<number> {
    const [row] = await sqlRows<{ deleted: number }>(
      this.txHost.tx,
      `WITH gone AS (
         DELETE FROM credential_changes WHERE version IN (
           SELECT version FROM credential_changes
            WHERE created_at < now() - make_interval(days => $1) ORDER BY version LIMIT $2)
         RETURNING version
       ), moved AS (
         UPDATE credentials_version SET full_from = GREATEST(full_from, (SELECT max(version) FROM gone))
          WHERE EXISTS (SELECT 1 FROM gone) RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [days, batch],
    );
    return row.deleted;
  }
}
