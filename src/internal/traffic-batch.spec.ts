import { sumByUser } from '../common/byte-count';
import { canonicalUuid, type Uuid } from '../common/uuid';
import type { TrafficReport } from './traffic-report.pipe';
import {
  compareReports,
  countReport,
  DeviceTally,
  nodeDays,
  thousandthsOf,
  UserTally,
  usersOf,
} from './traffic-batch';

/** A UUID ending in `tail`. */
const id = (tail: string): Uuid =>
  canonicalUuid(`00000000-0000-4000-8000-${tail.padStart(12, '0')}`)!;

const NODE_A = id('a');
const NODE_B = id('b');
const ALICE = id('a1');
const BOB = id('b0');
const REPORT = id('1');

/** A report of `entries` ([user, up, down]), with device lines `devices` ([device, user, up, down]). */
function report(
  entries: [Uuid, number, number][],
  { nodeId = NODE_A, reportId = REPORT, devices = [] as [Uuid, Uuid, number, number][] } = {},
): TrafficReport {
  return {
    nodeId,
    reportId,
    userIds: entries.map(([user]) => user),
    bytesUp: entries.map(([, up]) => up),
    bytesDown: entries.map(([, , down]) => down),
    devices: {
      deviceIds: devices.map(([device]) => device),
      userIds: devices.map(([, user]) => user),
      bytesUp: devices.map(([, , up]) => up),
      bytesDown: devices.map(([, , , down]) => down),
    },
    online: [],
  };
}

describe('the arithmetic of a traffic batch', () => {
  it('reads the node multiplier as whole thousandths', () => {
    expect(thousandthsOf('1.000')).toBe(1000n);
    expect(thousandthsOf('0.25')).toBe(250n);
    expect(thousandthsOf('2')).toBe(2000n);
    expect(thousandthsOf('0.005')).toBe(5n);
    expect(thousandthsOf('12.5')).toBe(12500n);
  });

  it('counts (up + down) × multiplier rounded down per entry, raw totals apart', () => {
    const tally = new UserTally();
    const counted = countReport(
      report([
        [ALICE, 1, 0], // 1 × 1.5 = 1.5 → 1
        [BOB, 10, 3], // 13 × 1.5 = 19.5 → 19
        [ALICE, 2, 1], // 3 × 1.5 = 4.5 → 4
      ]),
      thousandthsOf('1.5'),
      tally,
    );
    expect(counted).toEqual({ up: 13n, down: 4n, total: 24n });
    expect(tally).toEqual({ ids: [ALICE, BOB, ALICE], bytes: [1, 19, 4] });
  });

  it('is exact past 2^53, where numbers would round', () => {
    const tally = new UserTally();
    const max = Number.MAX_SAFE_INTEGER;
    const counted = countReport(
      report([
        [ALICE, max, max],
        [ALICE, max, 1],
      ]),
      1000n,
      tally,
    );
    const big = BigInt(max);
    expect(counted.total).toBe(3n * big + 1n);
    expect(tally.bytes).toEqual([2n * big, big + 1n]);
  });

  it('agrees with BigInt arithmetic on every size of entry and multiplier, 2^53 around', () => {
    const max = Number.MAX_SAFE_INTEGER;
    const sizes = [0, 1, 999, 1000, 1001, 2 ** 31, 2 ** 32 + 7, 2 ** 40 - 1, max];
    for (const multiplier of ['0', '0.001', '0.333', '1', '1.5', '7.777', '999.999']) {
      const thousandths = thousandthsOf(multiplier);
      // Entries just under, at and over the largest sum counted in doubles at this multiplier.
      const edge = thousandths === 0n ? max : Math.floor(max / Number(thousandths));
      const byTwo = (bytes: number): [number, number] => [
        bytes - Math.floor(bytes / 2),
        Math.floor(bytes / 2),
      ];
      const entries: [Uuid, number, number][] = [
        ...sizes.map((size, i): [Uuid, number, number] => [
          i % 2 ? ALICE : BOB,
          size,
          sizes[sizes.length - 1 - i],
        ]),
        ...[edge - 1, edge, edge + 1, edge + 1000]
          .filter((bytes) => bytes <= max)
          .map((bytes): [Uuid, number, number] => [ALICE, ...byTwo(bytes)]),
      ];
      const tally = new UserTally();
      const counted = countReport(report(entries), thousandths, tally);
      const exact = (up: number, down: number): bigint =>
        ((BigInt(up) + BigInt(down)) * thousandths) / 1000n;
      const expected = new Map<Uuid, bigint>();
      for (const [user, up, down] of entries) {
        expected.set(user, (expected.get(user) ?? 0n) + exact(up, down));
      }
      const sum = (values: bigint[]): bigint => values.reduce((a, b) => a + b, 0n);
      expect([multiplier, counted]).toEqual([
        multiplier,
        {
          up: sum(entries.map(([, up]) => BigInt(up))),
          down: sum(entries.map(([, , down]) => BigInt(down))),
          total: sum([...expected.values()]),
        },
      ]);
      const summed = sumByUser(tally.ids, tally.bytes);
      const tallied = new Map(summed.ids.map((user, i) => [user, BigInt(summed.bytes[i])]));
      expect([multiplier, tallied]).toEqual([multiplier, expected]);
    }
  });

  it('applies reports by node, then report id, in code-unit order', () => {
    const reports = [
      report([], { nodeId: NODE_B, reportId: id('1') }),
      report([], { nodeId: NODE_A, reportId: id('10') }),
      report([], { nodeId: NODE_A, reportId: id('a') }),
      report([], { nodeId: NODE_A, reportId: id('2') }),
    ];
    expect([...reports].sort(compareReports).map((r) => [r.nodeId, r.reportId])).toEqual([
      [NODE_A, id('2')],
      [NODE_A, id('a')],
      [NODE_A, id('10')],
      [NODE_B, id('1')],
    ]);
  });

  it('sums a device over the batch on its last node, ignores a line that names another user, and lists devices by id', () => {
    const [D1, D2] = [id('d1'), id('d2')];
    const devices = new DeviceTally();
    devices.addReport(
      report([], {
        devices: [
          [D2, ALICE, 5, 6],
          [D1, BOB, 1, 1],
        ],
      }),
    );
    devices.addReport(
      report([], {
        nodeId: NODE_B,
        devices: [
          [D2, ALICE, 1, 2],
          [D1, ALICE, 100, 100],
        ],
      }),
    );
    expect(devices.columns()).toEqual({
      ids: [D1, D2],
      userIds: [BOB, ALICE],
      up: [1n, 6n],
      down: [1n, 8n],
      nodeIds: [NODE_A, NODE_B],
    });
  });

  it("sums each node's daily figures over its reports, nodes by id", () => {
    expect(
      nodeDays([
        { nodeId: NODE_B, counted: { up: 1n, down: 2n, total: 3n } },
        { nodeId: NODE_A, counted: { up: 10n, down: 20n, total: 45n } },
        { nodeId: NODE_B, counted: { up: 4n, down: 5n, total: 6n } },
      ]),
    ).toEqual([
      { nodeId: NODE_A, up: 10n, down: 20n, counted: 45n },
      { nodeId: NODE_B, up: 5n, down: 7n, counted: 9n },
    ]);
    expect(nodeDays([])).toEqual([]);
  });

  it("names a report's users over their limit once each, in entry order, and counts unknown ones", () => {
    const carol = id('c0');
    const entries = report([
      [BOB, 1, 1],
      [carol, 1, 1],
      [ALICE, 1, 1],
      [BOB, 1, 1],
      [carol, 1, 1],
    ]);
    expect(usersOf(entries, new Set([ALICE, BOB]), new Set([carol]))).toEqual({
      overLimit: [BOB, ALICE],
      unknownUsers: 1,
    });
    expect(usersOf(entries, new Set(), new Set())).toEqual({ overLimit: [], unknownUsers: 0 });
  });
});
