import { isIP } from 'node:net';
import { MAX_LARGE_INPUT_ENTRIES } from '../common/body-parsing';
import { CHECKED_BODY } from '../common/hostile-input';
import type { Uuid } from '../common/uuid';
import {
  MAX_REPORT_DEVICES,
  MAX_REPORT_ENTRIES,
  MAX_REPORT_ONLINE,
  type OnlineDevice,
  type TrafficReport,
} from './traffic-report.pipe';

/** A traffic report read by `readTrafficReport`, as the route's pipe would have given it. */
export type ReadTrafficReport = TrafficReport & {
  /** The report's node, where the internal guard looks for it (`requestedNode`). */
  readonly node_id: Uuid;
  /** The hostile-input check and the route's pipe pass it as it is. */
  readonly [CHECKED_BODY]: true;
};

/**
 * A node's traffic report read straight from the request's bytes into the flat arrays the route
 * works with, when it is plainly one: what the agent sends (`JSON.stringify` of its report), the
 * keys the route's pipe knows, each once, in any order; ids as 36-character UUIDs, byte counts as
 * whole numbers written plainly, strings without escapes, control or non-ASCII characters, within
 * every limit the general way applies (the body's entry budget, the report's entries, devices
 * and online devices). Anything else gives null and goes the general way, which reads it as before
 * (shape count, `JSON.parse`, the hostile-input check, `TrafficReportPipe`) and answers it by the
 * same rules. So this is narrower than that way, never wider, and gives what it would
 * (`traffic-report-reader.spec.ts` holds the two side by side, on bodies made to differ too).
 *
 * Why: a 10,000-entry report is about 900 KB; the general way builds 10,000 objects to check and
 * copy them into arrays, and then collects them: a third of the service's CPU for the report.
 */
export function readTrafficReport(json: Buffer): ReadTrafficReport | null {
  try {
    return new ReportReader(json).report();
  } catch (failure) {
    if (failure === NOT_PLAIN) return null;
    throw failure;
  }
}

/** Thrown inside the reader when the body is not plainly a report; never leaves it. */
const NOT_PLAIN = Symbol('not plainly a traffic report');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** What each byte is to a UUID: a lower-case hex digit, an upper-case one, a dash, or 0. */
const LOWER_HEX = 1;
const UPPER_HEX = 2;
const DASH = 4;
const UUID_BYTE = new Uint8Array(256);
for (const digit of '0123456789abcdef') UUID_BYTE[digit.charCodeAt(0)] = LOWER_HEX;
for (const digit of 'ABCDEF') UUID_BYTE[digit.charCodeAt(0)] = UPPER_HEX;
UUID_BYTE['-'.charCodeAt(0)] = DASH;
/** What each of a UUID's 36 positions takes. */
const UUID_SHAPE = new Uint8Array(36).fill(LOWER_HEX | UPPER_HEX);
for (const dash of [8, 13, 18, 23]) UUID_SHAPE[dash] = DASH;

const keysOf = (...names: string[]): Uint8Array[] => names.map((name) => Buffer.from(name));
/** The keys of each object, in the order the reader numbers them. */
const REPORT_KEYS = keysOf('node_id', 'report_id', 'entries', 'online');
const ENTRY_KEYS = keysOf('user_id', 'bytes_up', 'bytes_down', 'devices');
const LINE_KEYS = keysOf('device_id', 'bytes_up', 'bytes_down');
const ONLINE_KEYS = keysOf('device_id', 'address', 'since');
/** An entry without devices as `JSON.stringify` writes it, around its id and counts. */
const [ENTRY_USER, ENTRY_UP, ENTRY_DOWN, ENTRY_END] = keysOf(
  '{"user_id":',
  ',"bytes_up":',
  ',"bytes_down":',
  '}',
);
/** The keys each object must have, as bits of their numbers above. */
const REPORT_REQUIRED = 0b0111;
const ENTRY_REQUIRED = 0b0111;
const LINE_REQUIRED = 0b111;
const ONLINE_REQUIRED = 0b111;

class ReportReader {
  private at = 0;
  /** Keys and array elements so far, as the body's entry budget counts them (`json-shape.ts`). */
  private entries = 0;
  private readonly userIds: Uuid[] = [];
  private readonly bytesUp: number[] = [];
  private readonly bytesDown: number[] = [];
  private readonly devices: TrafficReport['devices'] = {
    deviceIds: [],
    userIds: [],
    bytesUp: [],
    bytesDown: [],
  };
  private readonly online: OnlineDevice[] = [];

  constructor(private readonly json: Buffer) {}

  report(): ReadTrafficReport {
    let nodeId: Uuid | undefined;
    let reportId: Uuid | undefined;
    const seen = this.object(REPORT_KEYS, (key) => {
      if (key === 0) nodeId = this.uuid();
      else if (key === 1) reportId = this.uuid();
      else if (key === 2) this.array(MAX_REPORT_ENTRIES, () => this.entry());
      else this.array(MAX_REPORT_ONLINE, () => this.onlineDevice());
    });
    if ((seen & REPORT_REQUIRED) !== REPORT_REQUIRED) throw NOT_PLAIN;
    if (this.next() !== undefined) throw NOT_PLAIN;
    const { userIds, bytesUp, bytesDown, devices, online } = this;
    return {
      nodeId: nodeId!,
      reportId: reportId!,
      userIds,
      bytesUp,
      bytesDown,
      devices,
      online,
      node_id: nodeId!,
      [CHECKED_BODY]: true,
    };
  }

  /** `{user_id, bytes_up, bytes_down, devices?}` */
  private entry(): void {
    if (this.plainEntry()) return;
    let userId: Uuid | undefined;
    let up = 0;
    let down = 0;
    // Its device lines, which may come before its user id, get that id once the entry is read.
    const firstLine = this.devices.deviceIds.length;
    const seen = this.object(ENTRY_KEYS, (key) => {
      if (key === 0) userId = this.uuid();
      else if (key === 1) up = this.byteCount();
      else if (key === 2) down = this.byteCount();
      else this.deviceLines();
    });
    if ((seen & ENTRY_REQUIRED) !== ENTRY_REQUIRED) throw NOT_PLAIN;
    this.userIds.push(userId!);
    this.bytesUp.push(up);
    this.bytesDown.push(down);
    const lines = this.devices.userIds;
    for (let i = firstLine; i < this.devices.deviceIds.length; i++) lines.push(userId!);
  }

  /**
   * An entry without devices exactly as `JSON.stringify` writes it (most of a report), read
   * against its fixed text: true once read, false (nothing read) for any other, read member by
   * member instead.
   */
  private plainEntry(): boolean {
    const start = this.at;
    if (!this.skip(ENTRY_USER)) return false;
    const userId = this.uuid();
    if (this.skip(ENTRY_UP)) {
      const up = this.byteCount();
      if (this.skip(ENTRY_DOWN)) {
        const down = this.byteCount();
        if (this.skip(ENTRY_END)) {
          this.counted();
          this.counted();
          this.counted();
          this.userIds.push(userId);
          this.bytesUp.push(up);
          this.bytesDown.push(down);
          return true;
        }
      }
    }
    this.at = start;
    return false;
  }

  /** Steps over `text` when it is next, exactly; false (not moved) when it is not. */
  private skip(text: Uint8Array): boolean {
    const { json, at } = this;
    for (let i = 0; i < text.length; i++) if (json[at + i] !== text[i]) return false;
    this.at = at + text.length;
    return true;
  }

  /** `devices: [{device_id, bytes_up, bytes_down}]`, MAX_REPORT_DEVICES in the whole report. */
  private deviceLines(): void {
    const { devices } = this;
    this.array(MAX_REPORT_DEVICES, () => {
      let deviceId: Uuid | undefined;
      let up = 0;
      let down = 0;
      const seen = this.object(LINE_KEYS, (key) => {
        if (key === 0) deviceId = this.uuid();
        else if (key === 1) up = this.byteCount();
        else down = this.byteCount();
      });
      if (seen !== LINE_REQUIRED || devices.deviceIds.length === MAX_REPORT_DEVICES) {
        throw NOT_PLAIN;
      }
      devices.deviceIds.push(deviceId!);
      devices.bytesUp.push(up);
      devices.bytesDown.push(down);
    });
  }

  /** `{device_id, address, since}`: an IP address and a time, as the pipe reads them. */
  private onlineDevice(): void {
    let deviceId: Uuid | undefined;
    let address = '';
    let since = '';
    const seen = this.object(ONLINE_KEYS, (key) => {
      if (key === 0) deviceId = this.uuid();
      else if (key === 1) address = this.plainString();
      else since = this.plainString();
    });
    const time = new Date(since);
    if (seen !== ONLINE_REQUIRED || isIP(address) === 0 || Number.isNaN(time.getTime())) {
      throw NOT_PLAIN;
    }
    this.online.push({ deviceId: deviceId!, address, since: time });
  }

  /** An array of at most `most` elements, each read by `element`. */
  private array(most: number, element: () => void): void {
    if (this.next() !== OPEN_ARRAY) throw NOT_PLAIN;
    this.at++;
    if (this.next() === CLOSE_ARRAY) {
      this.at++;
      return;
    }
    let count = 0;
    for (;;) {
      if (++count > most) throw NOT_PLAIN;
      this.counted();
      element();
      const after = this.next();
      this.at++;
      if (after === CLOSE_ARRAY) return;
      if (after !== COMMA) throw NOT_PLAIN;
    }
  }

  /**
   * An object of keys among `keys`, each at most once, in any order; `member` reads the value of
   * each by the key's number. The keys met, as bits by number.
   */
  private object(keys: readonly Uint8Array[], member: (key: number) => void): number {
    if (this.next() !== OPEN_OBJECT) throw NOT_PLAIN;
    this.at++;
    let seen = 0;
    if (this.next() === CLOSE_OBJECT) {
      this.at++;
      return seen;
    }
    for (;;) {
      const key = this.key(keys, seen);
      seen |= 1 << key;
      member(key);
      const after = this.next();
      this.at++;
      if (after === CLOSE_OBJECT) return seen;
      if (after !== COMMA) throw NOT_PLAIN;
    }
  }

  /** A key among `keys` not yet `seen` (bits by number) and its colon: the key's number. */
  private key(keys: readonly Uint8Array[], seen: number): number {
    if (this.next() !== QUOTE) throw NOT_PLAIN;
    const { json } = this;
    const start = this.at + 1;
    for (let number = 0; number < keys.length; number++) {
      const key = keys[number];
      const length = key.length;
      // The key's bytes, then the string's end: a known key has no escape in it.
      if (json[start + length] !== QUOTE || json[start] !== key[0]) continue;
      let i = 1;
      while (i < length && json[start + i] === key[i]) i++;
      if (i < length) continue;
      if ((seen & (1 << number)) !== 0) throw NOT_PLAIN;
      this.at = start + length + 1;
      this.counted();
      if (this.next() !== COLON) throw NOT_PLAIN;
      this.at++;
      return number;
    }
    throw NOT_PLAIN;
  }

  /** A UUID of 36 characters in either case, canonical (lower-case) as `canonicalUuid` gives it. */
  private uuid(): Uuid {
    if (this.next() !== QUOTE) throw NOT_PLAIN;
    const { json } = this;
    const start = this.at + 1;
    if (json[start + 36] !== QUOTE) throw NOT_PLAIN;
    let classes = 0;
    for (let i = 0; i < 36; i++) {
      const byte = UUID_BYTE[json[start + i]];
      if ((byte & UUID_SHAPE[i]) === 0) throw NOT_PLAIN;
      classes |= byte;
    }
    this.at = start + 37;
    const text = json.toString('latin1', start, start + 36);
    return ((classes & UPPER_HEX) !== 0 ? text.toLowerCase() : text) as Uuid;
  }

  /** A whole number of bytes from 0 to 2^53-1, written plainly (no sign, fraction or exponent). */
  private byteCount(): number {
    const first = this.next();
    const { json } = this;
    let at = this.at;
    if (first === undefined || first < DIGIT_0 || first > DIGIT_9) throw NOT_PLAIN;
    let value = first - DIGIT_0;
    at++;
    if (value !== 0) {
      while (at < json.length && json[at] >= DIGIT_0 && json[at] <= DIGIT_9) {
        value = value * 10 + (json[at] - DIGIT_0);
        at++;
        // Past 2^53-1 the sum would no longer be exact: such a count is the general way's refusal.
        if (value > Number.MAX_SAFE_INTEGER) throw NOT_PLAIN;
      }
    }
    // What follows is read as the member's end (`object`), which refuses `01`, `1.5` or `1e3`:
    // valid JSON or not, the general way decides.
    this.at = at;
    return value;
  }

  /** A string of printable ASCII without escapes (an address, a time). */
  private plainString(): string {
    if (this.next() !== QUOTE) throw NOT_PLAIN;
    const { json } = this;
    const start = this.at + 1;
    const end = json.indexOf(QUOTE, start);
    if (end === -1) throw NOT_PLAIN;
    for (let i = start; i < end; i++) {
      const byte = json[i];
      if (byte < 0x20 || byte > 0x7e || byte === BACKSLASH) throw NOT_PLAIN;
    }
    this.at = end + 1;
    return json.toString('latin1', start, end);
  }

  /** One more key or element against the body's entry budget. */
  private counted(): void {
    if (++this.entries > MAX_LARGE_INPUT_ENTRIES) throw NOT_PLAIN;
  }

  /** The next byte that is not JSON whitespace (the reader stands on it), or undefined at the end. */
  private next(): number | undefined {
    const { json } = this;
    let at = this.at;
    // Nodes send no whitespace: the first byte is nearly always the one.
    if (json[at] > 0x20) return json[at];
    while (at < json.length && isSpace(json[at])) at++;
    this.at = at;
    return at < json.length ? json[at] : undefined;
  }
}

const isSpace = (byte: number): boolean =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
