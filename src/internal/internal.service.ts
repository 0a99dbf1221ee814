/**
 * The node agents' three calls (validate, traffic, limits) and the traffic batch behind them; the
 * batch's arithmetic is in traffic-batch.ts.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AppError } from '../common/errors';
import {
  BatchQueue,
  databaseWait,
  refuseWhenFull,
  sharedStatement,
} from '../common/concurrency/batch-queue';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { Metrics } from '../metrics/metrics.service';
import { isDatabaseUnavailable } from '../database/postgres-errors';
import { deleteInBatches } from '../scheduler/delete-in-batches';
import { SessionTokens } from '../nodes/session-token';
import { isOverLimit } from '../users/traffic-limit';
import {
  type AddedSummary,
  trafficAddition,
  type TrafficStanding,
  UserTrafficRepository,
} from '../users/user-traffic.repository';
import type { InvalidReason } from './dto/internal.dto';
import { InternalRepository, type SpendableToken, type SpentToken } from './internal.repository';
import type { TrafficReport } from './traffic-report.pipe';
import {
  compareReports,
  type CountedReport,
  countReport,
  DeviceTally,
  nodeDays,
  thousandthsOf,
  UserTally,
  usersOf,
} from './traffic-batch';
import { CredentialsRepository } from '../devices/credentials.repository';
import { PresenceService } from '../devices/presence.service';

export type Validation =
  { valid: true; standing: TrafficStanding } | { valid: false; reason: InvalidReason };

export interface ReportOutcome {
  applied: boolean;
  /** Bytes counted against users (after the node's multiplier); 0 for a repeat. */
  countedBytes: bigint;
  overLimit: string[];
  /** Reported users that do not exist (their entries were skipped). */
  unknownUsers: number;
  /** Devices whose newest connection is on another node: the node closes theirs. */
  close: string[];
}

/** What adding no bytes to no users answers. */
const NOTHING_ADDED: AddedSummary = {
  updated: 0,
  overLimit: [],
  crossed: [],
  warn80: [],
  firstUse: [],
};

/** Entries applied in one transaction at most (a single report may hold more). */
const BATCH_ENTRIES = 50_000;
/**
 * Entries waiting to be applied at most, about 100 full reports (some 200 MB of parsed reports):
 * past that a report is answered 503 at once and the node retries it later, so a stalled database
 * cannot make the queue, and the process, grow without end.
 */
export const WAITING_ENTRIES = 1_000_000;

const NOT_APPLIED: ReportOutcome = {
  applied: false,
  countedBytes: 0n,
  overLimit: [],
  unknownUsers: 0,
  close: [],
};

/** Rows one clean-up statement deletes. */
const CLEANUP_BATCH = 1_000;
/** How long an applied report's id is kept to refuse a repeat of it. */
export const TRAFFIC_REPORTS_KEPT_DAYS = 30;

/**
 * What the proxy on each node asks: is this session token good (once), count these bytes
 * (once per report), and which limits apply. Limits are read per call, so an admin's change
 * applies at the next call.
 */
@Injectable()
export class InternalService {
  private readonly logger = new Logger(InternalService.name);

  /** Traffic reports, applied in batches (see `report`). */
  private readonly writer: BatchQueue<TrafficReport, ReportOutcome>;
  /**
   * Validations that arrive while a batch of tokens is being spent share the next statement: one
   * round trip and one commit per batch instead of one per proxy connect.
   */
  private readonly spender: BatchQueue<SpendableToken, SpentToken>;

  constructor(
    private readonly internal: InternalRepository,
    private readonly users: UserTrafficRepository,
    @Inject(SessionTokens) private readonly tokens: SessionTokens,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly metrics: Metrics,
    private readonly credentials: CredentialsRepository,
    private readonly presence: PresenceService,
  ) {
    this.writer = new BatchQueue<TrafficReport, ReportOutcome>(
      (reports) => this.applyAll(reports),
      (report) => report.userIds.length,
      {
        batch: BATCH_ENTRIES,
        waiting: WAITING_ENTRIES,
        full: refuseWhenFull('too many traffic reports waiting, retry shortly', 5),
        // A report dropped here was never applied: the node sends it again.
        wait: databaseWait(settings.dbPoolWaitMs),
      },
    );
    this.spender = sharedStatement<SpendableToken, SpentToken>(
      (tokens) => this.internal.spendTokens(tokens, this.defaultLimit()),
      'too many validations waiting, retry shortly',
      settings.dbPoolWaitMs,
    );
  }

  /** The first reason that applies, in the contract's order; a valid token is spent. */
  async validate(token: string, nodeId: string): Promise<Validation> {
    const validation = await this.check(token, nodeId);
    this.metrics.tokenValidation(validation.valid ? 'valid' : validation.reason);
    return validation;
  }

  private async check(token: string, nodeId: string): Promise<Validation> {
    const claims = this.tokens.verify(token);
    if (!claims) return { valid: false, reason: 'bad_token' };
    if (claims.expiresAt * 1000 <= Date.now()) return { valid: false, reason: 'expired' };
    if (claims.nodeId !== nodeId.toLowerCase()) return { valid: false, reason: 'wrong_node' };
    const { spent, standing } = await this.spender.submit({
      jti: claims.jti,
      expiresAtS: claims.expiresAt,
      userId: claims.userId,
    });
    if (!spent) return { valid: false, reason: 'used' };
    if (standing?.blocked) return { valid: false, reason: 'blocked' };
    if (!standing?.active) return { valid: false, reason: 'no_subscription' };
    if (isOverLimit(standing.usedBytes, standing.limitBytes))
      return { valid: false, reason: 'traffic_exceeded' };
    return { valid: true, standing };
  }

  /** In the order asked; ids of users that do not exist are left out. */
  async limits(userIds: string[]): Promise<TrafficStanding[]> {
    const ids = [...new Set(userIds.map((id) => id.toLowerCase()))];
    const standings = await this.users.trafficStandings(ids, this.defaultLimit());
    const byId = new Map(standings.map((standing) => [standing.id, standing]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * Applies a report once, and counts it once committed (a repeat or an unknown node: refused).
   * Reports that arrive while others are being applied wait in memory, not in a pool connection,
   * and are then applied together in one transaction (see `applyAll`).
   */
  async report(report: TrafficReport): Promise<ReportOutcome> {
    let outcome: ReportOutcome;
    try {
      outcome = await this.writer.submit(report);
    } catch (error) {
      if (error instanceof AppError && error.status < 500) this.metrics.trafficReport('refused');
      throw error;
    }
    this.metrics.trafficReport(outcome.applied ? 'applied' : 'refused', outcome.countedBytes);
    return outcome;
  }

  /**
   * One transaction for the whole batch. Should it fail (a deadlock with another writer, a
   * failing statement), each report is tried again alone, so one report's trouble is never
   * another's; a database that is away fails them all at once, each answered 503 to retry.
   */
  private async applyAll(reports: TrafficReport[]): Promise<PromiseSettledResult<ReportOutcome>[]> {
    if (reports.length > 1) {
      try {
        return await this.apply(reports);
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error;
        this.logger.warn(
          { err: { name: (error as Error)?.name, code: (error as { code?: unknown })?.code } },
          `a batch of ${reports.length} traffic reports failed; applying each alone`,
        );
      }
    }
    const results: PromiseSettledResult<ReportOutcome>[] = [];
    for (const report of reports) {
      try {
        results.push(...(await this.apply([report])));
      } catch (reason) {
        results.push({ status: 'rejected', reason });
      }
    }
    return results;
  }

  /**
   * Each report's record, every user's counted bytes (one statement for all reports), the devices'
   * bytes, what each node sees connected (also for a repeat: the newest connection wins by its
   * time, so an old report changes nothing) and the nodes' daily raw figures commit together or not
   * at all. Rows are taken in one order (reports by node and id, users by id, devices by id, nodes
   * by id, then the devices' connections), so concurrent batches on other instances queue instead
   * of deadlocking. A batch is five round trips: BEGIN, the reports' record, the counting statement
   * (users, devices and nodes), the connections that changed (when any did), COMMIT.
   */
  @Transactional()
  private async apply(reports: TrafficReport[]): Promise<PromiseSettledResult<ReportOutcome>[]> {
    const results = new Array<PromiseSettledResult<ReportOutcome>>(reports.length);
    const order = reports.map((_, i) => i).sort((a, b) => compareReports(reports[a], reports[b]));
    const nodes = await this.internal.recordReports(
      order.map((i) => ({
        nodeId: reports[i].nodeId,
        reportId: reports[i].reportId,
        entries: reports[i].userIds.length,
      })),
    );
    // A key recorded now is applied by the first of its repeats in the batch; the others, and keys
    // applied before, are answered `applied: false`.
    const applied: { index: number; counted: CountedReport }[] = [];
    const tally = new UserTally();
    const deviceTally = new DeviceTally();
    for (const i of order) {
      const report = reports[i];
      const node = nodes.get(report.nodeId);
      if (node === undefined) {
        results[i] = { status: 'rejected', reason: new AppError('NOT_FOUND', 'node not found') };
      } else if (!node.recorded.delete(report.reportId)) {
        results[i] = { status: 'fulfilled', value: NOT_APPLIED };
      } else {
        const counted = countReport(report, thousandthsOf(node.multiplier), tally);
        deviceTally.addReport(report);
        applied.push({ index: i, counted });
      }
    }

    // Reports of a known node, applied now or before, in the batch's order.
    const sightings = order.filter((i) => results[i]?.status !== 'rejected');
    const days = nodeDays(
      applied.map(({ index, counted }) => ({ nodeId: reports[index].nodeId, counted })),
    );
    const addition = trafficAddition(tally);
    const devices = deviceTally.columns();
    const online = sightings.flatMap((i) => reports[i].online.map((c) => c.deviceId));
    // The devices' rows of both the bytes and the connections, locked in one pass in id order
    // (a batch's connections may be of devices whose users' rows it did not lock).
    const touched = [...new Set([...devices.ids, ...online])].sort();
    // Counted bytes or a sighting mean a live node, whose record (the first statement) ordered
    // the joins.
    const { added: summary, locked } =
      addition.ids.length + touched.length + days.length === 0
        ? { added: NOTHING_ADDED, locked: [] }
        : await this.internal.countTraffic(addition, this.defaultLimit(), touched, devices, days);
    const added = await this.users.settleAddition(addition, summary);
    const closes = await this.presence.observeAll(
      sightings.map((i) => ({ nodeId: reports[i].nodeId, online: reports[i].online })),
      locked,
    );
    // First counted traffic of an on_first_use subscription starts its days. Its new end reaches
    // the nodes through the users trigger, which takes the change log's counter: after the users',
    // devices' and nodes' rows.
    await this.users.startOnFirstUse(added.firstUse);
    // Users this batch took to their limit leave their nodes' device sets. The change log's
    // counter is taken last, as every writer of the log takes it.
    await this.credentials.recordUsers(added.crossed);

    const over = new Set<string>(added.overLimit);
    const missing = new Set<string>(added.missing);
    for (const { index, counted } of applied) {
      results[index] = {
        status: 'fulfilled',
        value: {
          applied: true,
          countedBytes: counted.total,
          close: [],
          ...usersOf(reports[index], over, missing),
        },
      };
    }
    sightings.forEach((i, k) => {
      const result = results[i];
      if (result.status === 'fulfilled' && closes[k].length > 0) {
        results[i] = { status: 'fulfilled', value: { ...result.value, close: closes[k] } };
      }
    });
    return results;
  }

  /** Deletes spent token ids whose tokens have expired, in batches; how many. */
  forgetExpiredTokens(signal?: AbortSignal): Promise<number> {
    return deleteInBatches((batch) => this.internal.forgetExpiredTokens(batch), {
      batch: CLEANUP_BATCH,
      signal,
    });
  }

  /** Deletes the ids of reports applied more than TRAFFIC_REPORTS_KEPT_DAYS ago; how many. */
  forgetOldReports(signal?: AbortSignal): Promise<number> {
    return deleteInBatches(
      (batch) => this.internal.forgetReportsOlderThan(TRAFFIC_REPORTS_KEPT_DAYS, batch),
      { batch: CLEANUP_BATCH, signal },
    );
  }

  private defaultLimit(): bigint {
    return this.settings.trafficLimitDefaultBytes;
  }
}
