import { Inject, Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { Metrics } from '../metrics/metrics.service';
import { deleteInBatches } from '../scheduler/delete-in-batches';
import { NodesRepository } from '../nodes/nodes.repository';
import { SessionTokens } from '../nodes/session-token';
import { type TrafficStanding, UsersRepository } from '../users/users.repository';
import type { InvalidReason } from './dto/internal.dto';
import { InternalRepository } from './internal.repository';
import type { TrafficReport } from './traffic-report.pipe';

export type Validation =
  { valid: true; standing: TrafficStanding } | { valid: false; reason: InvalidReason };

export interface ReportOutcome {
  applied: boolean;
  /** Bytes counted against users (after the node's multiplier); 0 for a repeat. */
  countedBytes: bigint;
  overLimit: string[];
  /** Reported users that do not exist (their entries were skipped). */
  unknownUsers: number;
}

/** Rows one clean-up statement deletes. */
const CLEANUP_BATCH = 1_000;
/** How long an applied report's id is kept to refuse a repeat of it. */
export const TRAFFIC_REPORTS_KEPT_DAYS = 30;

interface CountedReport {
  /** Counted bytes per user (entries of one user summed). */
  perUser: Map<string, bigint>;
  up: bigint;
  down: bigint;
  total: bigint;
}

/**
 * Each entry counts `(up + down) × multiplier` rounded down, exactly (the multiplier has at most
 * three decimals). Plain numbers while every figure stays a safe integer, which is every real
 * report; BigInt otherwise.
 */
function countReport(report: TrafficReport, thousandths: bigint): CountedReport {
  const k = Number(thousandths);
  const sums = new Map<string, number>();
  let up = 0;
  let down = 0;
  let total = 0;
  let safe = true;
  for (let i = 0; i < report.userIds.length && safe; i++) {
    const raw = report.bytesUp[i] + report.bytesDown[i];
    const scaled = raw * k;
    const entry = (scaled - (scaled % 1000)) / 1000;
    const id = report.userIds[i];
    const sum = (sums.get(id) ?? 0) + entry;
    sums.set(id, sum);
    up += report.bytesUp[i];
    down += report.bytesDown[i];
    total += entry;
    safe =
      Number.isSafeInteger(scaled) &&
      Number.isSafeInteger(sum) &&
      Number.isSafeInteger(up + down + total);
  }
  if (safe) {
    const perUser = new Map<string, bigint>();
    for (const [id, sum] of sums) perUser.set(id, BigInt(sum));
    return { perUser, up: BigInt(up), down: BigInt(down), total: BigInt(total) };
  }
  const perUser = new Map<string, bigint>();
  let bigUp = 0n;
  let bigDown = 0n;
  let bigTotal = 0n;
  for (let i = 0; i < report.userIds.length; i++) {
    const entryUp = BigInt(report.bytesUp[i]);
    const entryDown = BigInt(report.bytesDown[i]);
    const entry = ((entryUp + entryDown) * thousandths) / 1000n;
    bigUp += entryUp;
    bigDown += entryDown;
    bigTotal += entry;
    const id = report.userIds[i];
    perUser.set(id, (perUser.get(id) ?? 0n) + entry);
  }
  return { perUser, up: bigUp, down: bigDown, total: bigTotal };
}

/** numeric(6,3) text such as `1.000` or `0.25` as a whole number of thousandths. */
function thousandthsOf(multiplier: string): bigint {
  const [whole, fraction = ''] = multiplier.split('.');
  return BigInt(whole) * 1000n + BigInt((fraction + '000').slice(0, 3));
}

const isOver = (standing: TrafficStanding): boolean =>
  BigInt(standing.usedBytes) >= BigInt(standing.limitBytes);

/**
 * What the proxy on each node asks: is this session token good (once), count these bytes
 * (once per report), and which limits apply. Limits are read per call, so an admin's change
 * applies at the next call.
 */
@Injectable()
export class InternalService {
  constructor(
    private readonly internal: InternalRepository,
    private readonly nodes: NodesRepository,
    private readonly users: UsersRepository,
    @Inject(SessionTokens) private readonly tokens: SessionTokens,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly metrics: Metrics,
  ) {}

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
    if (!(await this.internal.spendToken(claims.jti, claims.expiresAt))) {
      return { valid: false, reason: 'used' };
    }
    const [standing] = await this.users.trafficStandings([claims.userId], this.defaultLimit());
    if (!standing?.active) return { valid: false, reason: 'no_subscription' };
    if (isOver(standing)) return { valid: false, reason: 'traffic_exceeded' };
    return { valid: true, standing };
  }

  /** In the order asked; ids of users that do not exist are left out. */
  async limits(userIds: string[]): Promise<TrafficStanding[]> {
    const ids = [...new Set(userIds.map((id) => id.toLowerCase()))];
    const standings = await this.users.trafficStandings(ids, this.defaultLimit());
    const byId = new Map(standings.map((standing) => [standing.id, standing]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** Applies a report once, and counts it once committed (a repeat or an unknown node: refused). */
  async report(report: TrafficReport): Promise<ReportOutcome> {
    let outcome: ReportOutcome;
    try {
      outcome = await this.apply(report);
    } catch (error) {
      if (error instanceof AppError && error.status < 500) this.metrics.trafficReport('refused');
      throw error;
    }
    this.metrics.trafficReport(outcome.applied ? 'applied' : 'refused', outcome.countedBytes);
    return outcome;
  }

  /**
   * Its record, every user's counted bytes (one statement) and the node's daily raw figures commit
   * together or not at all.
   */
  @Transactional()
  private async apply(report: TrafficReport): Promise<ReportOutcome> {
    const multiplier = await this.nodes.trafficMultiplier(report.nodeId);
    if (multiplier === null) throw new AppError('NOT_FOUND', 'node not found');
    const fresh = await this.internal.recordReport(
      report.nodeId,
      report.reportId,
      report.userIds.length,
    );
    if (!fresh) return { applied: false, countedBytes: 0n, overLimit: [], unknownUsers: 0 };

    const { perUser, up, down, total } = countReport(report, thousandthsOf(multiplier));
    const ids = [...perUser.keys()];
    const added =
      ids.length === 0
        ? { updated: 0, overLimit: [] }
        : await this.users.addTraffic(
            ids,
            ids.map((id) => perUser.get(id)!),
            this.defaultLimit(),
          );
    await this.internal.addNodeDay(report.nodeId, up, down, total);
    await this.nodes.touchReport(report.nodeId);
    return {
      applied: true,
      countedBytes: total,
      overLimit: added.overLimit,
      unknownUsers: ids.length - added.updated,
    };
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
