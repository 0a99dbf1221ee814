import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { atMostBigintMax, saturatingAddSql } from '../common/byte-count';
import type { Uuid } from '../common/uuid';
import {
  bigintArray,
  preparedRows,
  sqlRows,
  timestamptzArray,
  uuidArray,
  writtenAhead,
} from '../database/sql';
import { ROUTING_VERSION_SQL } from '../nodes/nodes.repository';
import { defaultLimitSql, EFFECTIVE_LIMIT_SQL } from '../users/traffic-limit';
import { shareBucket } from './share';
import type { PresenceRecord } from './presence.repository';

export type DeviceSource = 'hwid' | 'app' | 'link';

/** A device as its owner and staff see it. */
export interface DeviceRecord {
  id: string;
  userId: string;
  name: string;
  source: DeviceSource;
  client: string | null;
  vlessId: string;
  createdAt: Date;
  lastFetchAt: Date | null;
  lastSeenAt: Date | null;
  lastNodeId: string | null;
  addressHint: string | null;
  bytesUp: string;
  bytesDown: string;
  /** Changes of node or network within the current 10-minute window. */
  switches: number;
  switchesSince: Date | null;
}

/** What a device list shows of a device's connections: its address, hidden in part, and its moves. */
export interface DeviceMarks {
  id: string;
  addressHint: string | null;
  /** Changes of node or network within the current 10-minute window. */
  switches: number;
  switchesSince: Date | null;
}

/** A device a traffic batch locked: its marks, and its newest connection where recorded. */
export interface LockedDevice extends DeviceMarks {
  id: Uuid;
  connection: PresenceRecord | null;
}

/** The marks of a device a traffic batch locked. */
export type LockedMarks = Omit<LockedDevice, 'connection'>;

/** A traffic batch's device lines: each device's raw bytes, its user and the node it used. */
export interface DeviceLines {
  ids: Uuid[];
  userIds: Uuid[];
  up: bigint[];
  down: bigint[];
  nodeIds: Uuid[];
}

/**
 * The CTEs `locked` and `counted`, for the traffic batch's counting statement: lock the rows of
 * the devices `ids` (a uuid[] parameter, ascending) in id order, until the transaction ends, so
 * that reports naming one device from two nodes at once take turns, once `after` has run (an
 * uncorrelated condition on what must be locked before the devices, evaluated once before the
 * first lock); then add each line's raw bytes (`lines`: the parameters of `DeviceLines`' columns,
 * naming only devices of `ids`, ascending) and mark its device seen on its node (a device that is
 * not its user's, or gone, is skipped). The whole lock pass runs before the counters' UPDATE
 * takes a row, since the UPDATE's condition on the pass is uncorrelated, evaluated once up front
 * (a join with the pass instead was planned as a nested loop over it, quadratic in the devices).
 * `LOCKED_DEVICES_SQL` answers what was locked.
 */
export const lockAndCountDevicesCtes = (
  ids: string,
  lines: Record<keyof DeviceLines, string>,
  after: string,
): string => `locked AS MATERIALIZED (
    SELECT id, address_hint, switches, switches_since
      FROM devices WHERE id = ANY(${ids}::uuid[]) AND ${after} ORDER BY id FOR NO KEY UPDATE
  ), counted AS (
    UPDATE devices d
       SET bytes_up = ${saturatingAddSql('d.bytes_up', 'v.up')},
           bytes_down = ${saturatingAddSql('d.bytes_down', 'v.down')},
           last_seen_at = now(), last_node_id = v.node_id
      FROM unnest(${lines.ids}::uuid[], ${lines.userIds}::uuid[], ${lines.up}::bigint[],
                  ${lines.down}::bigint[], ${lines.nodeIds}::uuid[])
           AS v(id, user_id, up, down, node_id)
     WHERE d.id = v.id AND d.user_id = v.user_id AND (SELECT count(*) FROM locked) > 0
  )`;

/**
 * `DeviceLines` as the parameters of `lockAndCountDevicesCtes`, in its columns' order, in
 * PostgreSQL's binary form (pg's text arrays, quoted element by element, were most of what the
 * service allocated for a traffic batch's statements). The bytes are capped at BIGINT_MAX: a
 * counter given that many is full either way.
 */
export const deviceLinesParams = (lines: DeviceLines): unknown[] => [
  uuidArray(lines.ids),
  uuidArray(lines.userIds),
  bigintArray(lines.up.map(atMostBigintMax)),
  bigintArray(lines.down.map(atMostBigintMax)),
  uuidArray(lines.nodeIds),
];

/**
 * The devices `lockAndCountDevicesCtes` locked (devices that do not exist are left out), each
 * with its presence marks and newest connection as they are after any wait for a lock: the
 * connections are read by `device_connections` (migration 0028) with a snapshot of its own, taken
 * once the last lock is held (its argument reads every locked row first), where the statement's
 * own would miss what the batch it waited for wrote. `lockedDevice` reads a row.
 */
export const LOCKED_DEVICES_SQL = `SELECT l.id, l.address_hint AS "addressHint", l.switches,
      l.switches_since AS "switchesSince", c.node_id AS "nodeId", c.address, c.since,
      c.seen_at AS "seenAt"
    FROM locked l
    LEFT JOIN device_connections((SELECT array_agg(id) FROM locked)) c ON c.device_id = l.id`;

/** A row of `LOCKED_DEVICES_SQL`. */
export type LockedDeviceRow = DeviceMarks & Partial<Omit<PresenceRecord, 'deviceId'>>;

/** A row of `LOCKED_DEVICES_SQL` as a `LockedDevice`; its id as PostgreSQL writes one, canonical. */
export function lockedDevice(row: LockedDeviceRow): LockedDevice {
  const { nodeId, address, since, seenAt } = row;
  const id = row.id as Uuid;
  return {
    id,
    addressHint: row.addressHint,
    switches: row.switches,
    switchesSince: row.switchesSince,
    connection:
      nodeId && address && since && seenAt
        ? { deviceId: id, nodeId, address, since, seenAt }
        : null,
  };
}

/** What tells a fetch's device apart: its HWID's hash, or the app's name. */
export type DeviceKey = { hwidSha256: Buffer } | { app: string };

/** A device to make. */
export interface NewDevice {
  userId: string;
  name: string;
  source: DeviceSource;
  client: string | null;
  key?: DeviceKey;
}

/**
 * Everything a fetch of a link needs, read in one statement: the link's account with its traffic
 * (the limit by `traffic-limit.ts`'s rule, as `GET /users/me` shows it), its device limit and count,
 * the fetching device when it exists (with its place among the account's devices, oldest first),
 * and the routing counter (so the node list needs no read of its own).
 */
export interface LinkFetchView {
  userId: string;
  linkDeviceId: string | null;
  planName: string | null;
  expiresAt: Date | null;
  /** The next traffic reset of the plan's period, if it has one. */
  trafficResetAt: Date | null;
  blocked: boolean;
  usedBytes: string;
  limitBytes: string;
  deviceLimit: number;
  deviceCount: number;
  device: {
    id: string;
    vlessId: string;
    rank: number;
    client: string | null;
    lastFetchAt: string | null;
  } | null;
  routingVersion: string;
}

/** A subscription link's row: the account's (`deviceId` null) or a device's own. */
export interface LinkRecord {
  userId: string;
  deviceId: string | null;
  version: number;
}

const DEVICE = `d.id, d.user_id AS "userId", d.name, d.source, d.client, d.vless_id AS "vlessId",
  d.created_at AS "createdAt", d.last_fetch_at AS "lastFetchAt", d.last_seen_at AS "lastSeenAt",
  d.last_node_id AS "lastNodeId", d.address_hint AS "addressHint", d.bytes_up::text AS "bytesUp",
  d.bytes_down::text AS "bytesDown", d.switches, d.switches_since AS "switchesSince"`;

/** The owner of `devices` and `subscription_links`. Statements run in the caller's transaction. */
@Injectable()
export class DevicesRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** The user's devices, oldest first (the first `device_limit` of them are carried by nodes). */
  devicesOf(userId: string): Promise<DeviceRecord[]> {
    return sqlRows<DeviceRecord>(
      this.txHost.tx,
      `SELECT ${DEVICE} FROM devices d WHERE d.user_id = $1 ORDER BY d.created_at, d.id`,
      [userId],
    );
  }

  async device(userId: string, deviceId: string): Promise<DeviceRecord | null> {
    const [row] = await sqlRows<DeviceRecord>(
      this.txHost.tx,
      `SELECT ${DEVICE} FROM devices d WHERE d.user_id = $1 AND d.id = $2`,
      [userId, deviceId],
    );
    return row ?? null;
  }

  /** The user's device of that HWID or app name. */
  async deviceByKey(userId: string, key: DeviceKey): Promise<DeviceRecord | null> {
    const [column, value] = 'app' in key ? ['app', key.app] : ['hwid_sha256', key.hwidSha256];
    const [row] = await sqlRows<DeviceRecord>(
      this.txHost.tx,
      `SELECT ${DEVICE} FROM devices d WHERE d.user_id = $1 AND d.${column} = $2`,
      [userId, value],
    );
    return row ?? null;
  }

  /** The user's device limit: its plan's, else `fallback` (DEVICE_LIMIT_DEFAULT). */
  async deviceLimitOf(userId: string, fallback: number): Promise<number> {
    const [row] = await sqlRows<{ limit: number }>(
      this.txHost.tx,
      `SELECT COALESCE(p.device_limit, $2::int) AS limit
         FROM users u LEFT JOIN plans p ON p.name = u.plan_name WHERE u.id = $1`,
      [userId, fallback],
    );
    return row?.limit ?? fallback;
  }

  async countOf(userId: string): Promise<number> {
    const [row] = await sqlRows<{ count: number }>(
      this.txHost.tx,
      `SELECT count(*)::int AS count FROM devices WHERE user_id = $1`,
      [userId],
    );
    return row.count;
  }

  /** Makes the device (the caller holds the user's device lock and checked the limit). */
  async insert(device: NewDevice): Promise<DeviceRecord> {
    const key = device.key;
    const [row] = await sqlRows<DeviceRecord>(
      this.txHost.tx,
      `WITH d AS (
         INSERT INTO devices (user_id, share_bucket, name, source, client, hwid_sha256, app)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *
       )
       SELECT ${DEVICE} FROM d`,
      [
        device.userId,
        shareBucket(device.userId),
        device.name,
        device.source,
        device.client,
        key && 'hwidSha256' in key ? key.hwidSha256 : null,
        key && 'app' in key ? key.app : null,
      ],
    );
    return row;
  }

  /** Records a fetch of the link by the device, with what the app said of itself. */
  async touchFetch(deviceId: string, client: string | null): Promise<void> {
    await sqlRows(
      this.txHost.tx,
      `UPDATE devices SET last_fetch_at = now(), client = COALESCE($2, client) WHERE id = $1`,
      [deviceId, client],
    );
  }

  async rename(userId: string, deviceId: string, name: string): Promise<DeviceRecord | null> {
    const [row] = await sqlRows<DeviceRecord>(
      this.txHost.tx,
      `WITH d AS (UPDATE devices SET name = $3 WHERE user_id = $1 AND id = $2 RETURNING *)
       SELECT ${DEVICE} FROM d`,
      [userId, deviceId, name],
    );
    return row ?? null;
  }

  /** Removes the device; what it was, or null when the user has no such device. */
  async remove(userId: string, deviceId: string): Promise<DeviceRecord | null> {
    const [row] = await sqlRows<DeviceRecord>(
      this.txHost.tx,
      `WITH d AS (DELETE FROM devices WHERE user_id = $1 AND id = $2 RETURNING *)
       SELECT ${DEVICE} FROM d`,
      [userId, deviceId],
    );
    return row ?? null;
  }

  /**
   * Sets what a device's list shows of its address, and its count of switches, in the caller's
   * transaction, answered with its next query (`writtenAhead`), as `PresenceRepository.save`.
   */
  async markPresence(rows: LockedMarks[]): Promise<void> {
    if (rows.length === 0) return;
    await writtenAhead(this.txHost.tx, [
      {
        sql: `UPDATE devices d SET address_hint = v.hint, switches = v.switches, switches_since = v.since
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[]) AS v(id, hint, switches, since)
        WHERE d.id = v.id`,
        params: [
          uuidArray(rows.map((r) => r.id)),
          rows.map((r) => r.addressHint),
          rows.map((r) => r.switches),
          timestamptzArray(rows.map((r) => r.switchesSince)),
        ],
        prepared: true,
      },
    ]);
  }

  /**
   * `LinkFetchView` of the link whose token has this SHA-256, for a device told apart by `key`
   * (unused for a device's own link); null for an unknown token. `fallbacks` are the settings'
   * device limit and default traffic limit.
   */
  async linkFetchView(
    tokenSha256: Buffer,
    key: DeviceKey,
    fallbacks: { deviceLimit: number; trafficLimit: bigint },
  ): Promise<LinkFetchView | null> {
    const [row] = await preparedRows<LinkFetchView>(
      this.txHost.tx,
      `WITH link AS (
         SELECT user_id, device_id FROM subscription_links WHERE token_sha256 = $1
       ), own AS (
         SELECT dv.id, dv.vless_id, dv.hwid_sha256, dv.app, dv.client, dv.last_fetch_at,
                row_number() OVER (ORDER BY dv.created_at, dv.id) AS rank
           FROM devices dv JOIN link ON dv.user_id = link.user_id
       )
       SELECT u.id AS "userId", link.device_id AS "linkDeviceId", u.plan_name AS "planName",
              u.subscription_expires_at AS "expiresAt", u.traffic_reset_at AS "trafficResetAt",
              u.blocked_at IS NOT NULL AS blocked,
              u.traffic_used_bytes::text AS "usedBytes", ${EFFECTIVE_LIMIT_SQL}::text AS "limitBytes",
              COALESCE(p.device_limit, $4::int) AS "deviceLimit",
              (SELECT count(*)::int FROM own) AS "deviceCount",
              (SELECT json_build_object('id', own.id, 'vlessId', own.vless_id, 'rank', own.rank,
                        'client', own.client, 'lastFetchAt', own.last_fetch_at)
                 FROM own
                WHERE CASE WHEN link.device_id IS NOT NULL THEN own.id = link.device_id
                           WHEN $2::bytea IS NOT NULL THEN own.hwid_sha256 = $2
                           ELSE own.app = $3 END) AS device,
              (SELECT version::text FROM (${ROUTING_VERSION_SQL}) r) AS "routingVersion"
         FROM link JOIN users u ON u.id = link.user_id
         LEFT JOIN plans p ON p.name = u.plan_name CROSS JOIN ${defaultLimitSql('$5')}`,
      [
        tokenSha256,
        'hwidSha256' in key ? key.hwidSha256 : null,
        'app' in key ? key.app : null,
        fallbacks.deviceLimit,
        fallbacks.trafficLimit.toString(),
      ],
    );
    return row ?? null;
  }

  /** The link whose token has this SHA-256: one read of the primary key. */
  async linkByTokenHash(tokenSha256: Buffer): Promise<LinkRecord | null> {
    const [row] = await sqlRows<LinkRecord>(
      this.txHost.tx,
      `SELECT user_id AS "userId", device_id AS "deviceId", version
         FROM subscription_links WHERE token_sha256 = $1`,
      [tokenSha256],
    );
    return row ?? null;
  }

  /** The version of the account's link; null before it was first made. */
  async accountLinkVersion(userId: string, lock = false): Promise<number | null> {
    const [row] = await sqlRows<{ version: number }>(
      this.txHost.tx,
      `SELECT version FROM subscription_links WHERE user_id = $1 AND device_id IS NULL
       ${lock ? 'FOR UPDATE' : ''}`,
      [userId],
    );
    return row?.version ?? null;
  }

  /** Makes the account's link at version 0 unless it exists. */
  async createAccountLink(userId: string, tokenSha256: Buffer): Promise<void> {
    await sqlRows(
      this.txHost.tx,
      `INSERT INTO subscription_links (token_sha256, user_id, version) VALUES ($1, $2, 0)
       ON CONFLICT DO NOTHING`,
      [tokenSha256, userId],
    );
  }

  /** Replaces the account link's token (the caller locked the row and made the next token). */
  async replaceAccountLink(userId: string, version: number, tokenSha256: Buffer): Promise<void> {
    await sqlRows(
      this.txHost.tx,
      `UPDATE subscription_links SET token_sha256 = $3, version = $2, created_at = now()
        WHERE user_id = $1 AND device_id IS NULL`,
      [userId, version, tokenSha256],
    );
  }

  async createDeviceLink(userId: string, deviceId: string, tokenSha256: Buffer): Promise<void> {
    await sqlRows(
      this.txHost.tx,
      `INSERT INTO subscription_links (token_sha256, user_id, device_id) VALUES ($1, $2, $3)`,
      [tokenSha256, userId, deviceId],
    );
  }
}
