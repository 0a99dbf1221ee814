import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource } from 'typeorm';
import type { Uuid } from '../common/uuid';
import { pipelinedRows, preparedRows, sqlRows, type Statement, uuidArray } from '../database/sql';
import {
  type DeviceLines,
  deviceLinesParams,
  type LockedDevice,
  lockedDevice,
  type LockedDeviceRow,
  LOCKED_DEVICES_SQL,
  lockAndCountDevicesCtes,
} from '../devices/devices.repository';
import { addNodeDaysCtes, type NodeDay, nodeDaysParams } from '../nodes/nodes.repository';
import {
  type AddedSummary,
  addTrafficCtes,
  ORDERED_JOINS_SETTINGS,
  type TrafficAddition,
  type TrafficStanding,
  trafficStandingsSql,
} from '../users/user-traffic.repository';

/** A session token's claims that spending it needs. */
export interface SpendableToken {
  jti: string;
  /** Unix seconds. */
  expiresAtS: number;
  userId: string;
}

export interface SpentToken {
  spent: boolean;
  standing: TrafficStanding | null;
}

/**
 * The traffic batch's counting statement: the users' counters (`addTrafficCtes`), then the
 * devices' locks and counters (`lockAndCountDevicesCtes`), then the nodes' days and stamps
 * (`addNodeDaysCtes`). Each part waits for the one before it through an uncorrelated condition on
 * it, evaluated before its first row, so the rows are locked in the batch's order (users, devices,
 * nodes). One row per locked device in id order (one with no device when none is); the first
 * carries the users' summary (`updated` and four id lists), the others `updated` alone: a batch
 * of 40 devices read its four lists 40 times, a fifth of what the service allocated for it.
 */
export const COUNT_TRAFFIC_SQL = `WITH ${addTrafficCtes('$1', '$2', '$3')},
  ${lockAndCountDevicesCtes(
    '$4',
    { ids: '$5', userIds: '$6', up: '$7', down: '$8', nodeIds: '$9' },
    '(SELECT updated FROM added_summary) IS NOT NULL',
  )},
  ${addNodeDaysCtes(
    { nodeId: '$10', up: '$11', down: '$12', counted: '$13' },
    '(SELECT count(*) FROM locked) >= 0',
  )}
  SELECT s.updated,
         CASE WHEN d.n > 1 THEN NULL ELSE s."overLimit" END AS "overLimit",
         CASE WHEN d.n > 1 THEN NULL ELSE s.crossed END AS crossed,
         CASE WHEN d.n > 1 THEN NULL ELSE s."warn80" END AS "warn80",
         CASE WHEN d.n > 1 THEN NULL ELSE s."firstUse" END AS "firstUse",
         d.id, d."addressHint", d.switches, d."switchesSince", d."nodeId", d.address, d.since,
         d."seenAt"
    FROM added_summary s
    LEFT JOIN (SELECT l.*, row_number() OVER (ORDER BY l.id) AS n FROM (${LOCKED_DEVICES_SQL}) l) d
      ON true
   ORDER BY d.id`;

/** `InternalRepository.recordReports`' statement: $1 node ids, $2 report ids, $3 entries. */
const RECORD_REPORTS_SQL = `WITH ordered_joins AS MATERIALIZED (
    SELECT ${ORDERED_JOINS_SETTINGS}
  ), live AS (
    SELECT id, traffic_multiplier::text AS multiplier FROM nodes
     WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL
  ), recorded AS (
    INSERT INTO traffic_reports (node_id, report_id, entries)
    SELECT v.node_id, v.report_id, v.entries
      FROM unnest($1::uuid[], $2::uuid[], $3::int[])
           WITH ORDINALITY AS v(node_id, report_id, entries, i)
     WHERE v.node_id IN (SELECT id FROM live)
     ORDER BY v.i
    ON CONFLICT (node_id, report_id) DO NOTHING
    RETURNING node_id, report_id
  )
  SELECT l.id, l.multiplier,
         COALESCE(array_agg(r.report_id) FILTER (WHERE r.report_id IS NOT NULL), '{}')
           AS recorded
    FROM live l CROSS JOIN ordered_joins LEFT JOIN recorded r ON r.node_id = l.id
   GROUP BY l.id, l.multiplier`;

/**
 * Users an addition names at most for the counting statement to run prepared, with a plan kept
 * for every such call: at this size the planner's best join is always the nested loop driven by
 * the ids, the plan PostgreSQL keeps. A larger batch (a node of many users, or many reports at
 * once) is planned for its size at each call, where a merge join may be cheaper.
 */
const PREPARED_USERS_AT_MOST = 1_000;

/** What a batch's counting statement did (`InternalRepository.countTraffic`). */
export interface TrafficCounted {
  added: AddedSummary;
  /** The devices locked, in id order. */
  locked: LockedDevice[];
}

/**
 * Every query on `used_session_tokens` and `traffic_reports`. Spending a token also reads its
 * user's standing, with the users feature's statement (`trafficStandingsSql`); recording a report
 * reads its node's multiplier. A traffic batch counts its bytes in one statement made of the
 * users', devices' and nodes' parts (`countTraffic`), each written by its table's feature.
 */
@Injectable()
export class InternalRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * Spends session tokens and reads their users' traffic standings, in one statement outside any
   * transaction (every proxy connect runs it; concurrent validations share one, see
   * `InternalService`). Per token, in order: `spent` is true for the one call that recorded the
   * token's id (the primary key decides between concurrent statements; a token named twice in
   * `tokens` is spent by its first entry), false when it was spent before; `standing` is null when
   * the user does not exist. Ids must be lower-case UUIDs.
   */
  async spendTokens(tokens: SpendableToken[], defaultLimitBytes: bigint): Promise<SpentToken[]> {
    const first = new Map<string, SpendableToken>();
    for (const token of tokens) if (!first.has(token.jti)) first.set(token.jti, token);
    const once = [...first.values()];
    // One row per token of `once`, in its order: whether this statement recorded it, and the
    // standing of its user (null columns when the user does not exist). The ids are inserted in
    // one order, so two instances spending the same tokens at once wait for each other instead of
    // deadlocking.
    const rows = await preparedRows<TrafficStanding & { spent: boolean }>(
      this.dataSource,
      `WITH t AS (
         SELECT * FROM unnest($1::uuid[], $2::float8[], $3::uuid[])
                  WITH ORDINALITY AS t(jti, expires_s, user_id, i)
       ), spent AS (
         INSERT INTO used_session_tokens (jti, expires_at)
         SELECT t.jti, to_timestamp(t.expires_s) FROM t ORDER BY t.jti
         ON CONFLICT (jti) DO NOTHING RETURNING jti
       )
       SELECT sp.jti IS NOT NULL AS spent, s.*
         FROM t LEFT JOIN spent sp ON sp.jti = t.jti
         LEFT JOIN (${trafficStandingsSql('$3', '$4')}) s ON s.id = t.user_id
        ORDER BY t.i`,
      [
        once.map((token) => token.jti),
        once.map((token) => token.expiresAtS),
        once.map((token) => token.userId),
        defaultLimitBytes.toString(),
      ],
    );
    const outcomes = new Map<string, SpentToken>();
    once.forEach((token, i) => {
      const { spent, ...standing } = rows[i];
      outcomes.set(token.jti, { spent, standing: standing.id === null ? null : standing });
    });
    return tokens.map((token) => {
      const outcome = outcomes.get(token.jti)!;
      // A repeat of a token earlier in the same batch: the earlier one spent it.
      return first.get(token.jti) === token
        ? outcome
        : { spent: false, standing: outcome.standing };
    });
  }

  /** Forgets up to `batch` spent ids whose tokens have expired (they can no longer validate). */
  async forgetExpiredTokens(batch: number): Promise<number> {
    const rows = await sqlRows(
      this.txHost.tx,
      `DELETE FROM used_session_tokens WHERE ctid IN (
         SELECT ctid FROM used_session_tokens WHERE expires_at < now() LIMIT $1)
       RETURNING 1`,
      [batch],
    );
    return rows.length;
  }

  /**
   * Forgets up to `batch` applied report ids received more than `days` ago: a node retries a
   * report for minutes, never for that long.
   */
  async forgetReportsOlderThan(days: number, batch: number): Promise<number> {
    const rows = await sqlRows(
      this.txHost.tx,
      `DELETE FROM traffic_reports WHERE ctid IN (
         SELECT ctid FROM traffic_reports WHERE received_at < now() - $1 * interval '1 day'
          LIMIT $2)
       RETURNING 1`,
      [days, batch],
    );
    return rows.length;
  }

  /**
   * Records reports as applied and reads their nodes' traffic multipliers, in one statement. Per
   * live node named in `reports`: its multiplier (numeric text) and the ids of its reports recorded
   * now. A report of a deleted or unknown node is not recorded (its node is absent); a key applied
   * before is left out, and so is a repeat of a key within `reports`. Keys are inserted in the
   * order given; a concurrent delivery of the same key waits here for the first one's transaction
   * to end. When any node is live, it also orders the joins of the transaction's later statements
   * (`ORDERED_JOINS_SETTINGS`), as the users' counters need: the batch's first statement, so that
   * takes no round trip of its own.
   */
  async recordReports(reports: ReportRecord[]): Promise<Map<string, RecordedReports>> {
    const { sql, params } = recordStatement(reports);
    return recordedOf(await preparedRows<RecordRow>(this.txHost.tx, sql, params));
  }

  /**
   * Counts a batch's bytes in one statement (`COUNT_TRAFFIC_SQL`), in the caller's transaction,
   * whose first statement set the ordered joins (`recordReports`): `count.users` added to their
   * counters (`settleAddition` finishes it), the devices `count.devices` (ascending) locked with
   * `count.lines`' bytes added to them, and the nodes' `count.days`.
   */
  async countTraffic(count: TrafficCount): Promise<TrafficCounted> {
    const { sql, params, prepared } = countStatement(count);
    const run = prepared ? preparedRows : sqlRows;
    return countedOf(await run<CountRow>(this.txHost.tx, sql, params));
  }

  /**
   * `recordReports` and then `countTraffic`, written together in the caller's transaction, in one
   * round trip (`pipelinedRows`): for a batch whose bytes were counted on a guess of its record
   * (which reports are new, each node's multiplier), which the caller checks against the record
   * returned here before it lets the transaction commit. The record is returned even when the
   * count failed (a count made on a wrong guess may fail for it), the count's outcome beside it;
   * a failed record throws.
   */
  async recordAndCount(
    reports: ReportRecord[],
    count: TrafficCount,
  ): Promise<{
    recorded: Map<string, RecordedReports>;
    counted: PromiseSettledResult<TrafficCounted>;
  }> {
    const [record, counting] = await pipelinedRows(this.txHost.tx, [
      { ...recordStatement(reports), prepared: true },
      countStatement(count),
    ]);
    if (record.status === 'rejected') throw record.reason;
    return {
      recorded: recordedOf(record.value as unknown as RecordRow[]),
      counted:
        counting.status === 'fulfilled'
          ? { status: 'fulfilled', value: countedOf(counting.value as unknown as CountRow[]) }
          : counting,
    };
  }
}

/** What `countTraffic` is given. */
export interface TrafficCount {
  users: TrafficAddition;
  defaultBytes: bigint;
  devices: Uuid[];
  lines: DeviceLines;
  days: NodeDay[];
}

type RecordRow = { id: string; multiplier: string; recorded: string[] };
type CountRow = AddedSummary & Partial<LockedDeviceRow>;

/** The statement of `recordReports`. */
function recordStatement(reports: ReportRecord[]): { sql: string; params: unknown[] } {
  return {
    sql: RECORD_REPORTS_SQL,
    params: [
      reports.map((report) => report.nodeId),
      reports.map((report) => report.reportId),
      reports.map((report) => report.entries),
    ],
  };
}

function recordedOf(rows: RecordRow[]): Map<string, RecordedReports> {
  return new Map(
    rows.map((row) => [row.id, { multiplier: row.multiplier, recorded: new Set(row.recorded) }]),
  );
}

/** The statement of `countTraffic`, prepared for a batch of few users (`PREPARED_USERS_AT_MOST`). */
function countStatement({ users, defaultBytes, devices, lines, days }: TrafficCount): Statement {
  return {
    sql: COUNT_TRAFFIC_SQL,
    params: [
      users.idArray,
      users.bytesArray,
      defaultBytes.toString(),
      uuidArray(devices),
      ...deviceLinesParams(lines),
      ...nodeDaysParams(days),
    ],
    prepared: users.ids.length <= PREPARED_USERS_AT_MOST,
  };
}

/** The counting statement's rows: the summary is the first row's (`COUNT_TRAFFIC_SQL`). */
function countedOf(rows: CountRow[]): TrafficCounted {
  const { updated, overLimit, crossed, warn80, firstUse } = rows[0];
  const locked: LockedDevice[] = [];
  for (const row of rows) if (row.id) locked.push(lockedDevice(row as LockedDeviceRow));
  return { added: { updated, overLimit, crossed, warn80, firstUse }, locked };
}

/** A live node's traffic multiplier and the ids of its reports recorded by one call. */
export interface RecordedReports {
  multiplier: string;
  recorded: Set<string>;
}

/** A report to record: its node, its id and how many entries it had. */
export interface ReportRecord {
  nodeId: string;
  reportId: string;
  entries: number;
}
