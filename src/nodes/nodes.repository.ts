/**
 * Every statement that writes `nodes` and `node_traffic_days` (the table-ownership test holds it to
 * that): the registry, health and provisioning states, sealed secrets, and the traffic batch's daily
 * figures. Over 300 lines because one table has one writer; the statements themselves are short.
 */
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource } from 'typeorm';
import { type KeysetCursor, keysetSql, positional } from '../common/pagination';
import { preparedRows, sqlRows } from '../database/sql';
import type { NodeStatus, ProvisionState } from './entities/node.entity';

/**
 * The nodes whose ids are in the uuid[] parameter `ids`, locked in id order (once `after`, a
 * condition, holds): every statement that writes several nodes takes its rows' locks through it
 * (`WHERE id IN (…)`), so that concurrent ones (the health check's rounds, traffic batches) queue
 * instead of deadlocking.
 */
export const nodesLockedInIdOrderSql = (ids: string, after = 'true'): string =>
  `SELECT id FROM nodes WHERE id = ANY(${ids}::uuid[]) AND ${after} ORDER BY id FOR NO KEY UPDATE`;
/** `nodesLockedInIdOrderSql` of the parameter `$1`. */
export const NODES_LOCKED_IN_ID_ORDER = nodesLockedInIdOrderSql('$1');

/**
 * The routing counter (migration 0019), read by its key: a transaction that moves it many times
 * (one move per node whose status a health check changed) leaves its one-row table many pages
 * long, and a scan would read every page (see `CREDENTIALS_VERSION_SQL`).
 */
export const ROUTING_VERSION_SQL = `SELECT version FROM routing_version WHERE id`;

/** A node as the service works with it; the sealed secrets are not part of it. */
export interface NodeRecord {
  id: string;
  name: string;
  host: string;
  sshPort: number;
  sshUser: string;
  sshHostKeySha256: string | null;
  tunnelPort: number;
  tunnelProtocol: string;
  tunnelFlow: string;
  shortIds: string[];
  publicKey: string;
  sniDomain: string;
  trafficMultiplier: string;
  admissionPort: number;
  /** Null only on a node created before the agent and not provisioned since. */
  admissionCertSha256: string | null;
  status: NodeStatus;
  provisionState: ProvisionState;
  provisionStartedAt: Date | null;
  lastError: string | null;
  lastCheckedAt: Date | null;
  lastReportAt: Date | null;
  createdAt: Date;
}

export interface ListedNode extends NodeRecord {
  sortKey: string;
}

/** The sealed secrets, read only by the background SSH work. */
export interface NodeSecrets {
  sshPrivateKeyEnc: string;
  realityPrivateKeyEnc: string;
  /** The agent's credentials; null on a node created before the agent (see `AgentCredentials`). */
  admissionCertPem: string | null;
  admissionKeyEnc: string | null;
  agentSecretEnc: string | null;
}

/** Every value of a node sealed under DATA_ENCRYPTION_KEY (see reseal-secrets.command.ts). */
export type SealedNodeValues = Pick<
  NodeSecrets,
  'sshPrivateKeyEnc' | 'realityPrivateKeyEnc' | 'admissionKeyEnc' | 'agentSecretEnc'
>;

/** The agent's certificate (public), its sealed key, and the node's sealed secret and its hash. */
export interface AgentCredentials {
  admissionCertPem: string;
  admissionCertSha256: string;
  admissionKeyEnc: string;
  agentSecretEnc: string;
  agentSecretSha256: string;
}

export interface NewNode {
  name: string;
  host: string;
  sshPort: number;
  sshUser: string;
  sshPrivateKeyEnc: string;
  sshHostKeySha256: string | null;
  tunnelPort: number;
  shortIds: string[];
  publicKey: string;
  realityPrivateKeyEnc: string;
  sniDomain: string;
  trafficMultiplier: string;
  admissionPort: number;
  agent: AgentCredentials;
}

/** Columns a PATCH may change (already sealed where secret). */
export type NodeChanges = Partial<
  Pick<
    NewNode,
    | 'name'
    | 'host'
    | 'sshPort'
    | 'sshUser'
    | 'sshPrivateKeyEnc'
    | 'sshHostKeySha256'
    | 'tunnelPort'
    | 'sniDomain'
    | 'trafficMultiplier'
    | 'admissionPort'
  >
>;

const CHANGE_COLUMNS: Record<keyof NodeChanges, string> = {
  name: 'name',
  host: 'host',
  sshPort: 'ssh_port',
  sshUser: 'ssh_user',
  sshPrivateKeyEnc: 'ssh_private_key_enc',
  sshHostKeySha256: 'ssh_host_key_sha256',
  tunnelPort: 'tunnel_port',
  sniDomain: 'sni_domain',
  trafficMultiplier: 'traffic_multiplier',
  admissionPort: 'admission_port',
};

export interface RoutingNode {
  id: string;
  name: string;
  host: string;
  tunnelPort: number;
  tunnelProtocol: string;
  tunnelFlow: string;
  shortId: string;
  publicKey: string;
  sniDomain: string;
  admissionPort: number;
  admissionCertSha256: string;
}

export interface HealthTarget {
  id: string;
  host: string;
  port: number;
}

const NODE = `n.id, n.name, n.host, n.ssh_port AS "sshPort", n.ssh_user AS "sshUser",
  n.ssh_host_key_sha256 AS "sshHostKeySha256", n.tunnel_port AS "tunnelPort",
  n.tunnel_protocol AS "tunnelProtocol", n.tunnel_flow AS "tunnelFlow", n.short_ids AS "shortIds",
  n.public_key AS "publicKey", n.sni_domain AS "sniDomain",
  n.traffic_multiplier::text AS "trafficMultiplier", n.admission_port AS "admissionPort",
  n.admission_cert_sha256 AS "admissionCertSha256", n.status,
  n.provision_state AS "provisionState", n.provision_started_at AS "provisionStartedAt",
  n.last_error AS "lastError", n.last_checked_at AS "lastCheckedAt",
  n.last_report_at AS "lastReportAt", n.created_at AS "createdAt"`;

/**
 * Every write of `nodes` and `node_traffic_days` (a node's daily figures, which stamp the node's
 * `last_report_at` in the same statement), and every read of nodes but the traffic batch's
 * multipliers (read with the report record in `InternalRepository`). Deleted nodes are invisible
 * to all of them. Over 300 lines because it is one table's every statement, each a few lines of SQL.
 */
@Injectable()
export class NodesRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly dataSource: DataSource,
  ) {}

  async insert(node: NewNode): Promise<NodeRecord> {
    const [row] = await sqlRows<NodeRecord>(
      this.txHost.tx,
      `INSERT INTO nodes AS n (name, host, ssh_port, ssh_user, ssh_private_key_enc,
         ssh_host_key_sha256, tunnel_port, short_ids, public_key, reality_private_key_enc,
         sni_domain, traffic_multiplier, admission_port, admission_cert_pem, admission_cert_sha256,
         admission_key_enc, agent_secret_enc, agent_secret_sha256)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
       RETURNING ${NODE}`,
      [
        node.name,
        node.host,
        node.sshPort,
        node.sshUser,
        node.sshPrivateKeyEnc,
        node.sshHostKeySha256,
        node.tunnelPort,
        node.shortIds,
        node.publicKey,
        node.realityPrivateKeyEnc,
        node.sniDomain,
        node.trafficMultiplier,
        node.admissionPort,
        node.agent.admissionCertPem,
        node.agent.admissionCertSha256,
        node.agent.admissionKeyEnc,
        node.agent.agentSecretEnc,
        node.agent.agentSecretSha256,
      ],
    );
    return row;
  }

  async get(id: string): Promise<NodeRecord | null> {
    const [row] = await sqlRows<NodeRecord>(
      this.txHost.tx,
      `SELECT ${NODE} FROM nodes n WHERE n.id = $1 AND n.deleted_at IS NULL`,
      [id],
    );
    return row ?? null;
  }

  /** Reads and locks the node until the transaction ends. */
  async lock(id: string): Promise<NodeRecord | null> {
    const [row] = await sqlRows<NodeRecord>(
      this.txHost.tx,
      `SELECT ${NODE} FROM nodes n WHERE n.id = $1 AND n.deleted_at IS NULL FOR NO KEY UPDATE`,
      [id],
    );
    return row ?? null;
  }

  /** The sealed agent secret of each of these nodes that has one (the credentials nudge's key). */
  agentSecrets(ids: string[]): Promise<{ id: string; agentSecretEnc: string }[]> {
    return sqlRows<{ id: string; agentSecretEnc: string }>(
      this.txHost.tx,
      `SELECT id, agent_secret_enc AS "agentSecretEnc" FROM nodes
        WHERE id = ANY($1::uuid[]) AND agent_secret_enc IS NOT NULL`,
      [ids],
    );
  }

  async secrets(id: string): Promise<NodeSecrets | null> {
    const [row] = await sqlRows<NodeSecrets>(
      this.txHost.tx,
      `SELECT ssh_private_key_enc AS "sshPrivateKeyEnc",
              reality_private_key_enc AS "realityPrivateKeyEnc",
              admission_cert_pem AS "admissionCertPem", admission_key_enc AS "admissionKeyEnc",
              agent_secret_enc AS "agentSecretEnc"
         FROM nodes WHERE id = $1 AND deleted_at IS NULL`,
      [id],
    );
    return row ?? null;
  }

  /** Every node's sealed values, deleted nodes' too, locked until the transaction ends. */
  lockAllSealed(): Promise<(SealedNodeValues & { id: string })[]> {
    return sqlRows<SealedNodeValues & { id: string }>(
      this.txHost.tx,
      `SELECT id, ssh_private_key_enc AS "sshPrivateKeyEnc",
              reality_private_key_enc AS "realityPrivateKeyEnc",
              admission_key_enc AS "admissionKeyEnc", agent_secret_enc AS "agentSecretEnc"
         FROM nodes ORDER BY id FOR NO KEY UPDATE`,
    );
  }

  async replaceSealed(id: string, values: SealedNodeValues): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE nodes SET ssh_private_key_enc = $2, reality_private_key_enc = $3,
              admission_key_enc = $4, agent_secret_enc = $5
        WHERE id = $1`,
      [
        id,
        values.sshPrivateKeyEnc,
        values.realityPrivateKeyEnc,
        values.admissionKeyEnc,
        values.agentSecretEnc,
      ],
    );
  }

  /** Oldest first. */
  page(after: KeysetCursor | null, limit: number): Promise<ListedNode[]> {
    const params: unknown[] = [limit];
    const keyset = keysetSql(
      { at: 'n.created_at', id: 'n.id', direction: 'ASC' },
      after,
      positional(params),
    );
    return sqlRows<ListedNode>(
      this.txHost.tx,
      `SELECT ${NODE}, ${keyset.selectSortKey} FROM nodes n
        WHERE n.deleted_at IS NULL AND ${keyset.after}
        ORDER BY ${keyset.orderBy} LIMIT $1`,
      params,
    );
  }

  async update(id: string, changes: NodeChanges): Promise<NodeRecord | null> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [key, column] of Object.entries(CHANGE_COLUMNS)) {
      const value = changes[key as keyof NodeChanges];
      if (value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length === 0) return this.get(id);
    const [row] = await sqlRows<NodeRecord>(
      this.txHost.tx,
      `UPDATE nodes n SET ${sets.join(', ')} WHERE n.id = $1 AND n.deleted_at IS NULL
       RETURNING ${NODE}`,
      params,
    );
    return row ?? null;
  }

  /** Takes the node out of routing and health checks at once. False: no such node. */
  async softDelete(id: string): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `UPDATE nodes SET deleted_at = now(), status = 'unknown'
        WHERE id = $1 AND deleted_at IS NULL RETURNING id`,
      [id],
    );
    return rows.length > 0;
  }

  /**
   * Moves the node to `provisioning` unless a provisioning runs: one conditional UPDATE, so of
   * any number of concurrent requests exactly one gets the start time back.
   */
  async claimProvisioning(id: string): Promise<Date | null> {
    const [row] = await sqlRows<{ startedAt: Date }>(
      this.txHost.tx,
      `UPDATE nodes SET provision_state = 'provisioning', provision_started_at = date_trunc('milliseconds', clock_timestamp()),
              last_error = NULL
        WHERE id = $1 AND deleted_at IS NULL AND provision_state <> 'provisioning'
        RETURNING provision_started_at AS "startedAt"`,
      [id],
    );
    return row?.startedAt ?? null;
  }

  /**
   * Ends the provisioning that started at `startedAt`; one the watchdog already ended (or a newer
   * one) is left alone. False when it no longer applied.
   */
  async finishProvisioning(
    id: string,
    startedAt: Date,
    state: 'ready' | 'failed',
    error: string | null,
  ): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `UPDATE nodes SET provision_state = $3, last_error = $4
        WHERE id = $1 AND provision_state = 'provisioning' AND provision_started_at = $2
        RETURNING id`,
      [id, startedAt, state, error],
    );
    return rows.length > 0;
  }

  /**
   * Gives a node made before the agent its credentials; a node that has them keeps them. True
   * when these were stored.
   */
  async addAgentCredentials(id: string, agent: AgentCredentials): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `UPDATE nodes SET admission_cert_pem = $2, admission_cert_sha256 = $3,
              admission_key_enc = $4, agent_secret_enc = $5, agent_secret_sha256 = $6
        WHERE id = $1 AND deleted_at IS NULL AND agent_secret_sha256 IS NULL
        RETURNING id`,
      [
        id,
        agent.admissionCertPem,
        agent.admissionCertSha256,
        agent.admissionKeyEnc,
        agent.agentSecretEnc,
        agent.agentSecretSha256,
      ],
    );
    return rows.length > 0;
  }

  /** The live node whose secret has this SHA-256 (hex), outside any transaction. */
  async nodeBySecretHash(hash: string): Promise<string | null> {
    const [row] = await preparedRows<{ id: string }>(
      this.dataSource,
      `SELECT id FROM nodes WHERE agent_secret_sha256 = $1 AND deleted_at IS NULL`,
      [hash],
    );
    return row?.id ?? null;
  }

  /** Records the first host key seen; a key pinned meanwhile is kept. */
  async pinHostKey(id: string, fingerprint: string): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE nodes SET ssh_host_key_sha256 = $2 WHERE id = $1 AND ssh_host_key_sha256 IS NULL`,
      [id, fingerprint],
    );
  }

  async setLastError(id: string, error: string | null): Promise<void> {
    await this.txHost.tx.query(`UPDATE nodes SET last_error = $2 WHERE id = $1`, [id, error]);
  }

  /** Fails every provisioning older than `timeoutS`; their ids. */
  async failStaleProvisioning(timeoutS: number, error: string): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE nodes SET provision_state = 'failed', last_error = $2
        WHERE provision_state = 'provisioning'
          AND provision_started_at < clock_timestamp() - make_interval(secs => $1)
        RETURNING id`,
      [timeoutS, error],
    );
    return rows.map((row) => row.id);
  }

  healthTargets(): Promise<HealthTarget[]> {
    return sqlRows<HealthTarget>(
      this.txHost.tx,
      `SELECT id, host, tunnel_port AS port FROM nodes WHERE deleted_at IS NULL`,
    );
  }

  /** One statement for a whole round of health results (rows locked in id order). */
  async recordHealth(ids: string[], statuses: NodeStatus[]): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE nodes n SET status = r.status, last_checked_at = now()
         FROM unnest($1::uuid[], $2::text[]) AS r(id, status)
        WHERE n.id = r.id AND n.deleted_at IS NULL
          AND n.id IN (${NODES_LOCKED_IN_ID_ORDER})`,
      [ids, statuses],
    );
  }

  /**
   * The count of changes to what `routingNodes` answers (migration 0019's trigger): equal counts,
   * equal lists. Outside any transaction.
   */
  async routingVersion(): Promise<string> {
    const [row] = await preparedRows<{ version: string }>(
      this.dataSource,
      `SELECT version::text AS version FROM (${ROUTING_VERSION_SQL}) r`,
      [],
    );
    return row.version;
  }

  /**
   * The nodes a client may use (online, provisioned, with an agent to admit it), in name order,
   * outside any transaction.
   * Concurrent routing requests share one read (see `RoutingService`).
   */
  routingNodes(): Promise<RoutingNode[]> {
    // Prepared: every client runs it on every connect, and planning cost more than running.
    return preparedRows<RoutingNode>(
      this.dataSource,
      `SELECT id, name, host, tunnel_port AS "tunnelPort", tunnel_protocol AS "tunnelProtocol",
              tunnel_flow AS "tunnelFlow", short_ids[1] AS "shortId", public_key AS "publicKey",
              sni_domain AS "sniDomain", admission_port AS "admissionPort",
              admission_cert_sha256 AS "admissionCertSha256"
         FROM nodes
        WHERE deleted_at IS NULL AND status = 'online' AND provision_state = 'ready'
          AND admission_cert_sha256 IS NOT NULL
        ORDER BY name, id`,
      [],
    );
  }

  /**
   * The node's figures of the last `days` UTC days, today included, oldest first: one entry per
   * day, zeros on days it reported nothing. Read through the (node_id, day) primary key.
   */
  trafficDays(id: string, days: number): Promise<NodeTrafficDayFigures[]> {
    return sqlRows<NodeTrafficDayFigures>(
      this.txHost.tx,
      `WITH span AS (
         SELECT (now() AT TIME ZONE 'UTC')::date - ($2::int - 1) AS first
       )
       SELECT to_char(d.day, 'YYYY-MM-DD') AS date,
              COALESCE(t.bytes_up, 0)::text AS "bytesUp",
              COALESCE(t.bytes_down, 0)::text AS "bytesDown",
              COALESCE(t.bytes_counted, 0)::text AS "bytesCounted"
         FROM span s
        CROSS JOIN LATERAL generate_series(0, $2::int - 1) AS i
        CROSS JOIN LATERAL (SELECT (s.first + i)::date AS day) AS d
         LEFT JOIN node_traffic_days t ON t.node_id = $1 AND t.day = d.day
        ORDER BY d.day`,
      [id, days],
    );
  }

  /**
   * Adds each node's raw and counted bytes to its figures of the current UTC day and stamps its
   * last accepted report, in one statement (`addNodeDaysCtes`).
   */
  async addNodeDays(days: NodeDay[]): Promise<void> {
    await preparedRows(
      this.txHost.tx,
      `WITH ${addNodeDaysCtes(NODE_DAYS_PLACEHOLDERS, 'true')} SELECT 1`,
      nodeDaysParams(days),
    );
  }
}

/**
 * The CTEs `node_stamps` and `node_days`, for the traffic batch's counting statement: add each
 * node's raw and counted bytes to its figures of the current UTC day and stamp its last accepted
 * report (`nodes.last_report_at`, rows locked in id order), once `after` has run (an uncorrelated
 * condition on what must be locked before the nodes). `days` names the parameters of `NodeDay`'s
 * columns (`nodeDaysParams`).
 */
export const addNodeDaysCtes = (days: Record<keyof NodeDay, string>, after: string): string =>
  `node_stamps AS (
    UPDATE nodes SET last_report_at = now()
     WHERE id IN (${nodesLockedInIdOrderSql(days.nodeId, after)})
  ), node_days AS (
    INSERT INTO node_traffic_days AS d (node_id, day, bytes_up, bytes_down, bytes_counted)
    SELECT v.node_id, (now() AT TIME ZONE 'UTC')::date, v.up, v.down, v.counted
      FROM unnest(${days.nodeId}::uuid[], ${days.up}::numeric[], ${days.down}::numeric[],
                  ${days.counted}::numeric[]) AS v(node_id, up, down, counted)
     WHERE ${after}
    ON CONFLICT (node_id, day) DO UPDATE SET bytes_up = d.bytes_up + EXCLUDED.bytes_up,
      bytes_down = d.bytes_down + EXCLUDED.bytes_down,
      bytes_counted = d.bytes_counted + EXCLUDED.bytes_counted
  )`;

const NODE_DAYS_PLACEHOLDERS = { nodeId: '$1', up: '$2', down: '$3', counted: '$4' };

/** `NodeDay`s as the parameters of `addNodeDaysCtes`, in its columns' order. */
export const nodeDaysParams = (days: NodeDay[]): unknown[] => [
  days.map((day) => day.nodeId),
  days.map((day) => day.up.toString()),
  days.map((day) => day.down.toString()),
  days.map((day) => day.counted.toString()),
];

/** One UTC day of a node's traffic: raw bytes as reported, and what counted after the multiplier. */
export interface NodeTrafficDayFigures {
  /** `YYYY-MM-DD`, UTC. */
  date: string;
  bytesUp: string;
  bytesDown: string;
  bytesCounted: string;
}

/**
 * One node's figures of one report batch. The `nodeId`s of one call are distinct and sorted: the
 * daily rows are locked in that order, so concurrent batches queue instead of deadlocking.
 */
export interface NodeDay {
  nodeId: string;
  up: bigint;
  down: bigint;
  counted: bigint;
}
