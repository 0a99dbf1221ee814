import { randomUUID } from 'node:crypto';
import { MAX_LARGE_INPUT_ENTRIES, MAX_SCANNED_DEPTH, parseJsonBytes } from '../common/body-parsing';
import { hostileInputProblem } from '../common/hostile-input';
import { readTrafficReport } from './traffic-report-reader';
import {
  MAX_REPORT_DEVICES,
  MAX_REPORT_ENTRIES,
  type TrafficReport,
  TrafficReportPipe,
} from './traffic-report.pipe';

/**
 * The general way a traffic report's body goes (body-parsing.ts, then the route's pipe): the shape
 * count, strict JSON, the hostile-input check, TrafficReportPipe. The report, or why it is refused.
 */
function generalWay(raw: Buffer): TrafficReport | string {
  const parsed = parseJsonBytes(raw, {
    maxDepth: MAX_SCANNED_DEPTH,
    maxEntries: MAX_LARGE_INPUT_ENTRIES,
  });
  if ('refusal' in parsed) return refusalOf(parsed.refusal);
  const hostile = hostileInputProblem(parsed.body, MAX_LARGE_INPUT_ENTRIES);
  if (hostile !== null) return hostile.message;
  try {
    return new TrafficReportPipe().transform(parsed.body);
  } catch {
    return 'refused by the pipe';
  }
}

/** A refusal as the tests name it: the shape's limit, or malformed JSON. */
const refusalOf = (refusal: object): string =>
  refusal instanceof Error
    ? refusal.message.includes('nested')
      ? 'too-deep'
      : 'too-many-entries'
    : 'not JSON';

/** The report's own fields, without what the reader adds for the guard and the checks. */
const fields = (report: TrafficReport): TrafficReport => {
  const { nodeId, reportId, userIds, bytesUp, bytesDown, devices, online } = report;
  return { nodeId, reportId, userIds, bytesUp, bytesDown, devices, online };
};

/**
 * The reader's promise: a body it takes, the general way takes too, with the same report; a body
 * it does not take is left to the general way, whatever that answers.
 */
function expectNeverWider(raw: Buffer): boolean {
  const read = readTrafficReport(raw);
  if (read === null) return false;
  const general = generalWay(raw);
  expect(typeof general === 'string' ? general : fields(general)).toEqual(fields(read));
  return true;
}

/** A deterministic generator, so that a failing body can be found again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** A report as the agent writes it (`JSON.stringify` of its report), with devices and online ones. */
function agentReport(entries: number, next = random(entries)): Record<string, unknown> {
  return {
    node_id: randomUUID(),
    report_id: randomUUID(),
    entries: Array.from({ length: entries }, (_, i) => ({
      user_id: randomUUID(),
      bytes_up: Math.floor(next() * 2 ** 40),
      bytes_down: i === 0 ? Number.MAX_SAFE_INTEGER : Math.floor(next() * 1e6),
      ...(i % 3 === 0
        ? {
            devices: [
              { device_id: randomUUID(), bytes_up: 0, bytes_down: Math.floor(next() * 1e9) },
              { device_id: randomUUID(), bytes_up: 7, bytes_down: 9 },
            ],
          }
        : {}),
    })),
    online: [
      { device_id: randomUUID(), address: '203.0.113.9', since: new Date(0).toISOString() },
      { device_id: randomUUID(), address: '2001:db8::1', since: '2026-11-29T10:00:00.000Z' },
    ],
  };
}

const bytes = (value: unknown, space?: number): Buffer =>
  Buffer.from(JSON.stringify(value, null, space));

describe('readTrafficReport: a traffic report read from its bytes, as the general way reads it', () => {
  it('takes what nodes send, whole, and gives the report the pipe gives', () => {
    for (const size of [0, 1, 2, 50, 1_000]) {
      const raw = bytes(agentReport(size));
      expect(readTrafficReport(raw)).not.toBeNull();
      expectNeverWider(raw);
    }
    // No online list, and devices with no lines.
    const plain = {
      node_id: randomUUID(),
      report_id: randomUUID(),
      entries: [{ user_id: randomUUID(), bytes_up: 0, bytes_down: 0, devices: [] }],
    };
    expect(expectNeverWider(bytes(plain))).toBe(true);
  });

  it("a report of the route's largest size, 10,000 entries, is taken", () => {
    const raw = bytes(agentReport(MAX_REPORT_ENTRIES));
    const read = readTrafficReport(raw)!;
    expect(read.userIds).toHaveLength(MAX_REPORT_ENTRIES);
    expectNeverWider(raw);
  });

  it('takes any JSON whitespace, key order and upper-case ids, canonical as the pipe makes them', () => {
    const report = agentReport(5);
    const upper = JSON.stringify(report).replace(/"([0-9a-f-]{36})"/g, (id) => id.toUpperCase());
    const reordered = {
      online: report.online,
      entries: (report.entries as Record<string, unknown>[]).map(
        ({ user_id, bytes_up, bytes_down, devices }) => ({
          devices,
          bytes_down,
          bytes_up,
          user_id,
        }),
      ),
      report_id: report.report_id,
      node_id: report.node_id,
    };
    for (const raw of [
      bytes(report, 2),
      Buffer.from(` \t\r\n${JSON.stringify(report)}\n `),
      Buffer.from(upper),
      bytes(reordered),
    ]) {
      expect(expectNeverWider(raw)).toBe(true);
      expect(fields(readTrafficReport(raw)!)).toEqual(fields(readTrafficReport(bytes(report))!));
    }
  });

  it('leaves to the general way whatever it does not plainly take, refused or not', () => {
    const node = randomUUID();
    const user = randomUUID();
    const report = (entry: string, rest = ''): string =>
      `{"node_id":"${node}","report_id":"${randomUUID()}","entries":[${entry}]${rest}}`;
    const entry = (up: string, more = ''): string =>
      `{"user_id":"${user}","bytes_up":${up},"bytes_down":1${more}}`;
    const cases: [string, string][] = [
      ['a count written 1.0', report(entry('1.0'))],
      ['a count written 1e3', report(entry('1e3'))],
      ['a count with a leading zero', report(entry('01'))],
      ['a negative count', report(entry('-1'))],
      ['a count past 2^53-1', report(entry('9007199254740992'))],
      ['a count as a string', report(entry('"1"'))],
      ['an escape in an id', report(entry('1').replace(user.slice(0, 1), '\\u0030'))],
      ['an escaped key', report(entry('1').replace('"bytes_up"', '"bytes\\u005fup"'))],
      ['a key twice', report(entry('1', ',"bytes_up":2'))],
      ['a key the route does not know', report(entry('1', ',"extra":2'))],
      ['a prototype key', report(entry('1', ',"__proto__":{}'))],
      ['an entry without its user', report('{"bytes_up":1,"bytes_down":1}')],
      ['an entry that is not an object', report('[1]')],
      ['an id one character short', report(entry('1')).replace(user, user.slice(1))],
      ['an id not hex', report(entry('1')).replace(user, `g${user.slice(1)}`)],
      ['no entries', `{"node_id":"${node}","report_id":"${randomUUID()}"}`],
      ['a trailing comma', report(`${entry('1')},`)],
      ['trailing text', `${report(entry('1'))}x`],
      ['two reports', `${report(entry('1'))}${report(entry('1'))}`],
      ['a byte order mark', `\ufeff${report(entry('1'))}`],
      ['an unfinished body', report(entry('1')).slice(0, -2)],
      [
        'an online device with no IP address',
        report(
          entry('1'),
          `,"online":[{"device_id":"${user}","address":"x","since":"2026-01-01"}]`,
        ),
      ],
      [
        'an online device with a time that is not one',
        report(entry('1'), `,"online":[{"device_id":"${user}","address":"::1","since":"later"}]`),
      ],
      [
        'a non-ASCII character in a time',
        report(entry('1'), `,"online":[{"device_id":"${user}","address":"::1","since":"2026é"}]`),
      ],
      [
        'a control character in a time',
        report(entry('1'), `,"online":[{"device_id":"${user}","address":"::1","since":"2026\t"}]`),
      ],
      [
        'a device line missing its count',
        report(entry('1', `,"devices":[{"device_id":"${user}","bytes_up":1}]`)),
      ],
      ['an empty object', '{}'],
      ['an array', `[${entry('1')}]`],
      ['nothing', ' '],
    ];
    for (const [what, text] of cases) {
      expect({ what, read: readTrafficReport(Buffer.from(text)) }).toEqual({ what, read: null });
    }
  });

  it("leaves every limit to the general way: entries, devices, and the body's entry budget", () => {
    const user = randomUUID();
    const entry = { user_id: user, bytes_up: 1, bytes_down: 1 };
    const report = (entries: unknown[]) => ({
      node_id: randomUUID(),
      report_id: randomUUID(),
      entries,
    });
    const line = { device_id: user, bytes_up: 1, bytes_down: 1 };
    const lines = (count: number) => ({ ...entry, devices: Array(count).fill(line) });
    // The route's limits: 10,001 entries, 50,001 device lines.
    for (const body of [
      report(Array(MAX_REPORT_ENTRIES + 1).fill(entry)),
      report([lines(MAX_REPORT_DEVICES + 1)]),
    ]) {
      expect(readTrafficReport(bytes(body))).toBeNull();
      expect(generalWay(bytes(body))).toEqual(expect.any(String));
    }
    // The body's budget (100,000 keys and elements) holds with each limit kept: 10,000 entries of
    // 4 keys, an element each, and 2 device lines of 4 each: 130,000.
    const wide = bytes(report(Array(MAX_REPORT_ENTRIES).fill(lines(2))));
    expect(readTrafficReport(wide)).toBeNull();
    expect(generalWay(wide)).toBe('too-many-entries');
    // Entries without devices (read against their fixed text) count their keys too: 10,000 of
    // them (40,000 with their elements), 15,000 online devices (60,000) and the 4 report keys.
    const online = Array(15_000).fill({ device_id: user, address: '::1', since: '2026-11-29' });
    const busy = bytes({ ...report(Array(MAX_REPORT_ENTRIES).fill(entry)), online });
    expect(readTrafficReport(busy)).toBeNull();
    expect(generalWay(busy)).toBe('too-many-entries');
    // Just within it: 10,000 entries of 4 keys and an element, one device line of 4 each: 90,000.
    const within = bytes(report(Array(MAX_REPORT_ENTRIES).fill(lines(1))));
    expect(expectNeverWider(within)).toBe(true);
  });

  it('on 20,000 bodies made to differ from real reports by a byte or a few, never wider', () => {
    const next = random(46);
    const samples = [agentReport(3, next), agentReport(1, next)].map((report) => bytes(report));
    samples.push(bytes(agentReport(2, next), 1));
    const alphabet = Buffer.from(' \n\t{}[],:"\\-.eE+0123456789abcdefABCDEF_xé\u0000');
    let taken = 0;
    for (let round = 0; round < 20_000; round++) {
      const sample = samples[round % samples.length];
      let raw = Buffer.from(sample);
      for (let edits = 1 + Math.floor(next() * 3); edits > 0; edits--) {
        const at = Math.floor(next() * raw.length);
        const byte = alphabet[Math.floor(next() * alphabet.length)];
        const kind = next();
        if (kind < 0.4) raw[at] = byte;
        else if (kind < 0.7)
          raw = Buffer.concat([raw.subarray(0, at), Buffer.of(byte), raw.subarray(at)]);
        else raw = Buffer.concat([raw.subarray(0, at), raw.subarray(at + 1)]);
      }
      if (expectNeverWider(raw)) taken++;
    }
    // Some edits keep a report (a digit in a count, a space, a hex digit in an id): those are
    // the ones that test the promise; the rest are left to the general way.
    expect(taken).toBeGreaterThan(1_000);
  });
});
