/**
 * The arithmetic of a traffic batch, apart from its statements: the order reports are applied in,
 * each entry's counted bytes under the node's multiplier, the sums per user, per device and per
 * node, and which of a report's users to name in its answer. No database, no clock.
 */
import { addBytes, type ByteCount } from '../common/byte-count';
import { sortedUuids, type Uuid } from '../common/uuid';
import type { DeviceLines } from '../devices/devices.repository';
import type { NodeDay } from '../nodes/nodes.repository';
import type { TrafficReport } from './traffic-report.pipe';

/** By node, then report id; plain code-unit order, the same on every instance. */
export function compareReports(a: TrafficReport, b: TrafficReport): number {
  const [x, y] = a.nodeId === b.nodeId ? [a.reportId, b.reportId] : [a.nodeId, b.nodeId];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A report's raw and counted bytes, for the node's daily figures and the answer. */
export interface CountedReport {
  up: bigint;
  down: bigint;
  total: bigint;
}

/**
 * Counted bytes of each entry over the reports of one batch, in the order counted; summed by user
 * where they are applied (`sumByUser`).
 */
export class UserTally {
  readonly ids: Uuid[] = [];
  readonly bytes: ByteCount[] = [];

  add(id: Uuid, counted: ByteCount): void {
    this.ids.push(id);
    this.bytes.push(counted);
  }
}

/** Raw bytes per device over the applied reports of one batch, with its user and last node. */
export class DeviceTally {
  readonly lines = new Map<Uuid, { userId: Uuid; up: bigint; down: bigint; nodeId: Uuid }>();

  addReport(report: TrafficReport): void {
    const { deviceIds, userIds, bytesUp, bytesDown } = report.devices;
    for (let i = 0; i < deviceIds.length; i++) {
      const line = this.lines.get(deviceIds[i]);
      const up = BigInt(bytesUp[i]);
      const down = BigInt(bytesDown[i]);
      if (line && line.userId === userIds[i]) {
        line.up += up;
        line.down += down;
        line.nodeId = report.nodeId;
      } else if (!line) {
        this.lines.set(deviceIds[i], { userId: userIds[i], up, down, nodeId: report.nodeId });
      }
    }
  }

  /** Columns for `DevicesRepository.addTraffic`, devices in ascending id order. */
  columns(): DeviceLines {
    const ids = sortedUuids([...this.lines.keys()]);
    const lines = ids.map((id) => this.lines.get(id)!);
    return {
      ids,
      userIds: lines.map((l) => l.userId),
      up: lines.map((l) => l.up),
      down: lines.map((l) => l.down),
      nodeIds: lines.map((l) => l.nodeId),
    };
  }
}

/**
 * Adds each entry's `(up + down) × multiplier` rounded down, exactly (the multiplier has at most
 * three decimals), to the tally; the report's totals. In doubles while the product is a safe
 * integer, which covers any entry under about 9 TB at a multiplier up to 1, in BigInt past that:
 * exact either way, up to the bigint maximum the counters saturate at.
 */
export function countReport(
  report: TrafficReport,
  thousandths: bigint,
  tally: UserTally,
): CountedReport {
  const perMille = Number(thousandths);
  // Entries of at most this many bytes have a product below 2^53 (any entry at a multiplier of 0).
  const exactUpTo = perMille === 0 ? Infinity : Math.floor(Number.MAX_SAFE_INTEGER / perMille);
  let up: ByteCount = 0;
  let down: ByteCount = 0;
  let total: ByteCount = 0;
  for (let i = 0; i < report.userIds.length; i++) {
    const entryUp = report.bytesUp[i];
    const entryDown = report.bytesDown[i];
    // Past 2^53 the sum of two safe integers rounds, but never down to `exactUpTo` or below.
    const bytes = entryUp + entryDown;
    let entry: ByteCount;
    if (bytes <= exactUpTo) {
      const product = bytes * perMille;
      entry = (product - (product % 1000)) / 1000;
    } else {
      entry = ((BigInt(entryUp) + BigInt(entryDown)) * thousandths) / 1000n;
    }
    tally.add(report.userIds[i], entry);
    up = addBytes(up, entryUp);
    down = addBytes(down, entryDown);
    total = addBytes(total, entry);
  }
  return { up: BigInt(up), down: BigInt(down), total: BigInt(total) };
}

/** Each node's daily figures over the applied reports, nodes in ascending id order. */
export function nodeDays(applied: { nodeId: string; counted: CountedReport }[]): NodeDay[] {
  const perNode = new Map<string, NodeDay>();
  for (const { nodeId, counted } of applied) {
    const day = perNode.get(nodeId) ?? { nodeId, up: 0n, down: 0n, counted: 0n };
    perNode.set(nodeId, {
      nodeId,
      up: day.up + counted.up,
      down: day.down + counted.down,
      counted: day.counted + counted.total,
    });
  }
  return [...perNode.keys()].sort().map((id) => perNode.get(id)!);
}

/** The report's users (each once, in the order of their first entry) now over, and unknown. */
export function usersOf(
  report: TrafficReport,
  over: Set<string>,
  missing: Set<string>,
): { overLimit: string[]; unknownUsers: number } {
  const overLimit: string[] = [];
  let unknownUsers = 0;
  if (over.size === 0 && missing.size === 0) return { overLimit, unknownUsers };
  const seen = new Set<string>();
  for (const id of report.userIds) {
    if ((!over.has(id) && !missing.has(id)) || seen.has(id)) continue;
    seen.add(id);
    if (over.has(id)) overLimit.push(id);
    else unknownUsers++;
  }
  return { overLimit, unknownUsers };
}

/** numeric(6,3) text such as `1.000` or `0.25` as a whole number of thousandths. */
export function thousandthsOf(multiplier: string): bigint {
  const [whole, fraction = ''] = multiplier.split('.');
  return BigInt(whole) * 1000n + BigInt((fraction + '000').slice(0, 3));
}
