/**
 * The node agents' three calls (validate, traffic, limits) and the traffic batch behind them; the
 * batch's arithmetic is in traffic-batch.ts.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
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
  type TrafficAddition,
  type TrafficStanding,
  UserTrafficRepository,
} from '../users/user-traffic.repository';
import type { InvalidReason } from './dto/internal.dto';
import {
  InternalRepository,
  type RecordedReports,
  type ReportRecord,
  type SpendableToken,
  type SpentToken,
  type TrafficCount,
  type TrafficCounted,
} from './internal.repository';
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
  /** Each node's traffic multiplier as its last batch's record read it (`guessRecord`). */
  private readonly multipliers = new Map<string, string>();

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
        return await this.applyOnGuess(reports);
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
        results.push(...(await this.applyOnGuess([report])));
      } catch (reason) {
        results.push({ status: 'rejected', reason });
      }
    }
    return results;
  }

  /**
   * `apply` on a guess of the batch's record when there is one (every report new, each node's
   * multiplier as its last batch read it), which saves the round trip between the record and the
   * counting statement; when the record shows the guess wrong (a repeat, a changed multiplier, a
   * deleted node), that transaction is rolled back and the batch applied again from its record.
   * Never inside another transaction: there the rollback would not undo the count made on the
   * guess, and the batch applied again would count it twice.
   */
  @Transactional(Propagation.Never)
  private async applyOnGuess(
    reports: TrafficReport[],
  ): Promise<PromiseSettledResult<ReportOutcome>[]> {
    try {
      return await this.apply(reports, true);
    } catch (error) {
      if (!(error instanceof GuessMissed)) throw error;
      this.metrics.trafficBatchRecounted();
      return this.apply(reports, false);
    }
  }

  /**
   * Each report's record, every user's counted bytes (one statement for all reports), the devices'
   * bytes, what each node sees connected (also for a repeat: the newest connection wins by its
   * time, so an old report changes nothing) and the nodes' daily raw figures commit together or not
   * at all. Rows are taken in one order (reports by node and id, users by id, devices by id, nodes
   * by id, then the devices' connections), so concurrent batches on other instances queue instead
   * of deadlocking. A batch is two round trips: its start with the reports' record and, on a
   * guess of that record (`guess`, see `applyOnGuess`), the counting statement (users, devices and
   * nodes); then the connections that changed (when any did) with COMMIT right behind them
   * (`writtenAhead`). Without a guess the counting statement waits for the record; a batch that
   * starts a subscription's days or takes a user to its limit has a round trip more for each.
   */
  @Transactional()
  private async apply(
    reports: TrafficReport[],
    guess: boolean,
  ): Promise<PromiseSettledResult<ReportOutcome>[]> {
    const order = reports.map((_, i) => i).sort((a, b) => compareReports(reports[a], reports[b]));
    const records = order.map((i) => ({
      nodeId: reports[i].nodeId,
      reportId: reports[i].reportId,
      entries: reports[i].userIds.length,
    }));
    const guessed = guess ? this.guessRecord(records) : undefined;
    const planned = guessed && planBatch(reports, order, guessed, this.defaultLimit());
    let batch: PlannedBatch;
    let counted: TrafficCounted;
    if (guessed && planned?.count) {
      const done = await this.internal.recordAndCount(records, planned.count);
      this.remember(records, done.recorded);
      // Counted on the guess: right only if the record says what the guess said.
      if (!sameRecord(done.recorded, guessed)) throw new GuessMissed();
      if (done.counted.status === 'rejected') throw done.counted.reason;
      batch = planned;
      counted = done.counted.value;
    } else {
      const recorded = await this.internal.recordReports(records);
      this.remember(records, recorded);
      batch = planBatch(reports, order, recorded, this.defaultLimit());
      counted = batch.count ? await this.internal.countTraffic(batch.count) : NOTHING_COUNTED;
    }
    const { results, applied, sightings, addition } = batch;
    const added = await this.users.settleAddition(addition, counted.added);
    const closes = await this.presence.observeAll(
      sightings.map((i) => ({ nodeId: reports[i].nodeId, online: reports[i].online })),
      counted.locked,
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
    for (const { index, counted: report } of applied) {
      results[index] = {
        status: 'fulfilled',
        value: {
          applied: true,
          countedBytes: report.total,
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

  /**
   * What the record of `records` would say if every report were new and each node's multiplier
   * what its last batch read; undefined when a node's is not known yet.
   */
  private guessRecord(records: ReportRecord[]): Map<string, RecordedReports> | undefined {
    const guessed = new Map<string, RecordedReports>();
    for (const { nodeId, reportId } of records) {
      let node = guessed.get(nodeId);
      if (!node) {
        const multiplier = this.multipliers.get(nodeId);
        if (multiplier === undefined) return undefined;
        node = { multiplier, recorded: new Set() };
        guessed.set(nodeId, node);
      }
      node.recorded.add(reportId);
    }
    return guessed;
  }

  /** Keeps each live node's multiplier for the next guess, and forgets the nodes that are gone. */
  private remember(records: ReportRecord[], recorded: Map<string, RecordedReports>): void {
    for (const { nodeId } of records) {
      const node = recorded.get(nodeId);
      if (node) this.multipliers.set(nodeId, node.multiplier);
      else this.multipliers.delete(nodeId);
    }
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

/** A batch's counted bytes were counted on a guess of its record that the record proved wrong. */
class GuessMissed extends Error {
  constructor() {
    super("the batch's record differs from its guess");
  }
}

/** What counting nothing returns. */
const NOTHING_COUNTED: TrafficCounted = { added: NOTHING_ADDED, locked: [] };

/** What a batch applies, given its record: each report's answer so far and what to count. */
interface PlannedBatch {
  /** Each report's answer: set for those refused or repeated, the applied ones filled in later. */
  results: PromiseSettledResult<ReportOutcome>[];
  /** The reports applied now, with their counted bytes. */
  applied: { index: number; counted: CountedReport }[];
  /** Reports of a known node, applied now or before, in the batch's order. */
  sightings: number[];
  addition: TrafficAddition;
  /** The counting statement's input; undefined when there is nothing to count. */
  count: TrafficCount | undefined;
}

/**
 * The batch `reports` (applied in `order`) as its record `recorded` says: a report of a node not
 * there is refused, a key not recorded now is answered `applied: false`, the first of the others'
 * repeats in the batch is applied at its node's multiplier. `recorded` is left as it was.
 */
function planBatch(
  reports: TrafficReport[],
  order: number[],
  recorded: Map<string, RecordedReports>,
  defaultBytes: bigint,
): PlannedBatch {
  const results = new Array<PromiseSettledResult<ReportOutcome>>(reports.length);
  const fresh = new Map([...recorded].map(([id, node]) => [id, new Set(node.recorded)]));
  const applied: { index: number; counted: CountedReport }[] = [];
  const tally = new UserTally();
  const deviceTally = new DeviceTally();
  for (const i of order) {
    const report = reports[i];
    const node = recorded.get(report.nodeId);
    if (node === undefined) {
      results[i] = { status: 'rejected', reason: new AppError('NOT_FOUND', 'node not found') };
    } else if (!fresh.get(report.nodeId)!.delete(report.reportId)) {
      results[i] = { status: 'fulfilled', value: NOT_APPLIED };
    } else {
      const counted = countReport(report, thousandthsOf(node.multiplier), tally);
      deviceTally.addReport(report);
      applied.push({ index: i, counted });
    }
  }
  const sightings = order.filter((i) => results[i]?.status !== 'rejected');
  const days = nodeDays(
    applied.map(({ index, counted }) => ({ nodeId: reports[index].nodeId, counted })),
  );
  const addition = trafficAddition(tally);
  const lines = deviceTally.columns();
  const online = sightings.flatMap((i) => reports[i].online.map((c) => c.deviceId));
  // The devices' rows of both the bytes and the connections, locked in one pass in id order
  // (a batch's connections may be of devices whose users' rows it did not lock).
  const devices = [...new Set([...lines.ids, ...online])].sort();
  // Counted bytes or a sighting mean a live node, whose record (the first statement) ordered
  // the joins.
  const count =
    addition.ids.length + devices.length + days.length === 0
      ? undefined
      : { users: addition, defaultBytes, devices, lines, days };
  return { results, applied, sightings, addition, count };
}

/** Whether two records name the same nodes, at the same multipliers, with the same reports. */
function sameRecord(a: Map<string, RecordedReports>, b: Map<string, RecordedReports>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, node] of a) {
    const other = b.get(id);
    if (!other || other.multiplier !== node.multiplier) return false;
    if (other.recorded.size !== node.recorded.size) return false;
    for (const reportId of node.recorded) if (!other.recorded.has(reportId)) return false;
  }
  return true;
}
