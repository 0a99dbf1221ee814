import { randomUUID } from 'node:crypto';
import type { OnlineDevice } from './addresses';
import type { CoreClient, UserCounters } from './core-client';
import { parseEmail } from './emails';
import type { CounterValues, Journal, JournalState, Report, TrafficEntry } from './journal';
import { reason, type Log } from './log';
import type { ServiceClient } from './service-client';
import type { Sessions } from './sessions';

/** What a report needs of the node's devices: who is online, and closing their connections. */
export interface ReportDevices {
  online(): Promise<OnlineDevice[] | undefined>;
  closeUsers(userIds: Iterable<string>, cause: string): Promise<void>;
  closeDevices(deviceIds: readonly string[], cause: string): Promise<void>;
}

/** At most this many users in one POST /internal/traffic (the contract's limit). */
export const REPORT_MAX_USERS = 10_000;
/** Start times of the core that differ by less than this are the same start (uptime is in seconds). */
const SAME_START_MS = 2_500;

/**
 * One report cycle: finish the pending report if there is one, then read the core's counters
 * without resetting them, compute each user's bytes since the recorded values (a core that
 * restarted counts from zero), write the report to the journal, send it until the service answers
 * 2xx, and only then record the new values. Killed at any point, the agent resends the same
 * `report_id` (the service applies a report once), so every byte the core counted is counted once.
 */
export class Reporter {
  constructor(
    private readonly state: JournalState,
    private readonly journal: Journal,
    private readonly core: CoreClient,
    private readonly service: ServiceClient,
    private readonly sessions: Sessions,
    private readonly log: Log,
    private readonly now: () => number = Date.now,
    private readonly devices: ReportDevices | null = null,
  ) {}

  /**
   * Answers true when every report was acknowledged; false when the service could not be reached
   * (the report stays pending and is sent first next time).
   */
  async cycle(): Promise<boolean> {
    if (this.state.pending && !(await this.deliver())) return false;
    const read = await this.readCore();
    const restarted =
      this.state.coreStartedAt !== null &&
      read.startedAt > this.state.coreStartedAt + SAME_START_MS;
    const base = restarted ? {} : this.state.last;
    const { entries, moved } = usage(read.counters, base);
    this.sessions.touch(moved);
    const reports = chunk(entries, REPORT_MAX_USERS).map((part): Report => ({
      report_id: randomUUID(),
      entries: part,
    }));
    this.state.pending = {
      reports,
      next: values(read.counters),
      coreStartedAt:
        restarted || this.state.coreStartedAt === null ? read.startedAt : this.state.coreStartedAt,
    };
    await this.journal.commit();
    if (restarted) this.log('core_restarted', { sessions: this.sessions.live.length });
    return this.deliver();
  }

  /** Sends every part of the pending report; records its values once all were acknowledged. */
  private async deliver(): Promise<boolean> {
    const pending = this.state.pending;
    if (!pending) return true;
    const overLimit = new Set<string>();
    const close = new Set<string>();
    // Who is online now goes with the first part, each time it is sent; it is never journaled.
    let online: OnlineDevice[] | undefined;
    try {
      online = await this.devices?.online();
    } catch (error) {
      this.log('online_failed', { error: reason(error) });
    }
    for (const [index, report] of pending.reports.entries()) {
      try {
        const answer = await this.service.traffic(report, index === 0 ? online : undefined);
        for (const user of answer.over_limit) overLimit.add(user);
        for (const device of answer.close) close.add(device);
        this.log('report_sent', {
          report_id: report.report_id,
          users: report.entries.length,
          applied: answer.applied,
          ...(index === 0 && online ? { online: online.length } : {}),
        });
      } catch (error) {
        this.log('report_failed', { report_id: report.report_id, error: reason(error) });
        return false;
      }
    }
    this.state.last = pending.next;
    this.state.coreStartedAt = pending.coreStartedAt;
    this.state.pending = null;
    await this.journal.commit();
    if (overLimit.size > 0) {
      await this.sessions.endUsers(overLimit, 'over_limit');
      await this.devices?.closeUsers(overLimit, 'over_limit');
    }
    if (close.size > 0) await this.devices?.closeDevices([...close], 'other_node');
    return true;
  }

  /** The counters and the core's start time, read again if the core restarted between the two. */
  private async readCore(): Promise<{ counters: Map<string, UserCounters>; startedAt: number }> {
    for (let attempt = 0; ; attempt += 1) {
      const before = this.now() - (await this.core.uptime()) * 1000;
      const counters = await this.core.userCounters();
      const after = this.now() - (await this.core.uptime()) * 1000;
      if (Math.abs(after - before) < SAME_START_MS || attempt >= 2)
        return { counters, startedAt: after };
    }
  }
}

/**
 * Each user's bytes since `base` (a counter below its base value started again from zero): the sum
 * of its sessions and devices, with the devices' share also per device.
 */
export function usage(
  counters: ReadonlyMap<string, UserCounters>,
  base: CounterValues,
): { entries: TrafficEntry[]; moved: string[] } {
  const byUser = new Map<string, TrafficEntry>();
  const moved: string[] = [];
  for (const [email, now] of counters) {
    const owner = parseEmail(email);
    if (owner === null) continue;
    const userId = owner.userId;
    const [baseUp, baseDown] = base[email] ?? [0, 0];
    const up = now.up >= baseUp ? now.up - baseUp : now.up;
    const down = now.down >= baseDown ? now.down - baseDown : now.down;
    if (up === 0 && down === 0) continue;
    moved.push(email);
    const entry = byUser.get(userId) ?? { user_id: userId, bytes_up: 0, bytes_down: 0 };
    entry.bytes_up += up;
    entry.bytes_down += down;
    if (owner.deviceId !== undefined) {
      entry.devices ??= [];
      entry.devices.push({ device_id: owner.deviceId, bytes_up: up, bytes_down: down });
    }
    byUser.set(userId, entry);
  }
  return { entries: [...byUser.values()], moved };
}

function values(counters: ReadonlyMap<string, UserCounters>): CounterValues {
  const out: CounterValues = {};
  for (const [email, { up, down }] of counters) out[email] = [up, down];
  return out;
}

/** Parts of at most `size`; an empty list is one empty part (an empty report is still sent). */
function chunk<T>(items: readonly T[], size: number): T[][] {
  if (items.length === 0) return [[]];
  const parts: T[][] = [];
  for (let i = 0; i < items.length; i += size) parts.push(items.slice(i, i + size));
  return parts;
}
