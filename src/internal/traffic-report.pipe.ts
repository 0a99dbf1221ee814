import { Injectable, type PipeTransform } from '@nestjs/common';
import { isIP } from 'node:net';
import { type FieldProblem, validationFailed } from '../common/errors';
import { isCheckedBody } from '../common/hostile-input';
import { canonicalUuid, type Uuid } from '../common/uuid';

export const MAX_REPORT_ENTRIES = 10_000;
/** Device lines in one report at most (all entries together), and devices online at most. */
export const MAX_REPORT_DEVICES = 50_000;
export const MAX_REPORT_ONLINE = 50_000;
/** Problems listed in one answer; a report with more says so once. */
const MAX_PROBLEMS = 20;

export interface TrafficReport {
  nodeId: Uuid;
  reportId: Uuid;
  userIds: Uuid[];
  bytesUp: number[];
  bytesDown: number[];
  /** Each device line of the entries, flattened: the device, its user, its raw bytes. */
  devices: { deviceIds: Uuid[]; userIds: Uuid[]; bytesUp: number[]; bytesDown: number[] };
  /** The devices connected to the node now, with their client address and since when. */
  online: OnlineDevice[];
}

export interface OnlineDevice {
  deviceId: Uuid;
  address: string;
  since: Date;
}

const isByteCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * The first key of `value` not among `keys`. A `for…in` over a parsed body's object reads its
 * keys without copying them into an array (10,000 entries, 10,000 arrays); a parsed object has no
 * inherited enumerable keys to meet.
 */
const onlyKeys = (value: object, keys: readonly string[]): string | undefined => {
  for (const key in value) if (!keys.includes(key)) return key;
  return undefined;
};

/**
 * Checks a whole traffic report before anything is applied, into flat arrays. A plain loop:
 * class-validator over 10,000 entry objects would cost far more than applying them. A report the
 * route's body reader already read into those arrays (`readTrafficReport`) is passed as it is.
 */
@Injectable()
export class TrafficReportPipe implements PipeTransform<unknown, TrafficReport> {
  transform(body: unknown): TrafficReport {
    if (isCheckedBody(body)) return body as TrafficReport;
    const problems: FieldProblem[] = [];
    const problem = (field: string, message: string): void => {
      if (problems.length < MAX_PROBLEMS) problems.push({ field, message });
    };
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw validationFailed([{ field: 'body', message: 'must be an object' }]);
    }
    const report = body as Record<string, unknown>;
    const extra = onlyKeys(report, ['node_id', 'report_id', 'entries', 'online']);
    if (extra !== undefined) problem(extra, 'is not allowed');
    const [nodeId, reportId] = ['node_id', 'report_id'].map((field) => {
      const value = report[field];
      const id = typeof value === 'string' ? canonicalUuid(value) : undefined;
      if (id === undefined) problem(field, 'must be a UUID');
      return id;
    });
    const entries = report.entries;
    if (!Array.isArray(entries)) {
      problem('entries', 'must be an array');
      throw validationFailed(problems);
    }
    if (entries.length > MAX_REPORT_ENTRIES) {
      problem('entries', `must have at most ${MAX_REPORT_ENTRIES} entries`);
      throw validationFailed(problems);
    }
    const count = entries.length;
    const userIds = new Array<Uuid>(count);
    const bytesUp = new Array<number>(count);
    const bytesDown = new Array<number>(count);
    const devices: TrafficReport['devices'] = {
      deviceIds: [],
      userIds: [],
      bytesUp: [],
      bytesDown: [],
    };
    for (let i = 0; i < count; i++) {
      const entry: unknown = entries[i];
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        problem(`entries[${i}]`, 'must be an object');
        continue;
      }
      const { user_id: userId, bytes_up: up, bytes_down: down } = entry as Record<string, unknown>;
      const unknownKey = onlyKeys(entry, ['user_id', 'bytes_up', 'bytes_down', 'devices']);
      if (unknownKey !== undefined) problem(`entries[${i}].${unknownKey}`, 'is not allowed');
      const id = typeof userId === 'string' ? canonicalUuid(userId) : undefined;
      if (id === undefined) problem(`entries[${i}].user_id`, 'must be a UUID');
      else userIds[i] = id;
      if (isByteCount(up)) bytesUp[i] = up;
      else problem(`entries[${i}].bytes_up`, 'must be a whole number of bytes from 0 to 2^53-1');
      if (isByteCount(down)) bytesDown[i] = down;
      else problem(`entries[${i}].bytes_down`, 'must be a whole number of bytes from 0 to 2^53-1');
      const lines = (entry as Record<string, unknown>).devices;
      if (lines === undefined) continue;
      if (!Array.isArray(lines) || devices.deviceIds.length + lines.length > MAX_REPORT_DEVICES) {
        problem(`entries[${i}].devices`, `must be an array, ${MAX_REPORT_DEVICES} in all at most`);
        continue;
      }
      lines.forEach((line: unknown, j) => {
        const field = `entries[${i}].devices[${j}]`;
        const fields =
          typeof line === 'object' && line !== null ? (line as Record<string, unknown>) : {};
        const deviceId =
          typeof fields.device_id === 'string' ? canonicalUuid(fields.device_id) : undefined;
        if (
          deviceId === undefined ||
          !isByteCount(fields.bytes_up) ||
          !isByteCount(fields.bytes_down) ||
          onlyKeys(fields, ['device_id', 'bytes_up', 'bytes_down']) !== undefined
        ) {
          problem(field, 'must be {device_id, bytes_up, bytes_down}');
          return;
        }
        devices.deviceIds.push(deviceId);
        devices.userIds.push(userIds[i]);
        devices.bytesUp.push(fields.bytes_up);
        devices.bytesDown.push(fields.bytes_down);
      });
    }
    const online = readOnline(report.online, problem);
    if (problems.length > 0) throw validationFailed(problems);
    return {
      nodeId: nodeId!,
      reportId: reportId!,
      userIds,
      bytesUp,
      bytesDown,
      devices,
      online,
    };
  }
}

/** `online: [{device_id, address, since}]`, optional. */
function readOnline(
  value: unknown,
  problem: (field: string, message: string) => void,
): OnlineDevice[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_REPORT_ONLINE) {
    problem('online', `must be an array of at most ${MAX_REPORT_ONLINE} devices`);
    return [];
  }
  const online: OnlineDevice[] = [];
  value.forEach((item: unknown, i) => {
    const fields =
      typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {};
    const deviceId =
      typeof fields.device_id === 'string' ? canonicalUuid(fields.device_id) : undefined;
    const address = typeof fields.address === 'string' ? fields.address : '';
    const since = typeof fields.since === 'string' ? new Date(fields.since) : new Date(NaN);
    if (
      deviceId === undefined ||
      isIP(address) === 0 ||
      Number.isNaN(since.getTime()) ||
      onlyKeys(fields, ['device_id', 'address', 'since']) !== undefined
    ) {
      problem(`online[${i}]`, 'must be {device_id, address (an IP address), since (a time)}');
      return;
    }
    online.push({ deviceId, address, since });
  });
  return online;
}
