import { Injectable, type PipeTransform } from '@nestjs/common';
import { type FieldProblem, validationFailed } from '../common/errors';
import { canonicalUuid, type Uuid } from '../common/uuid';

export const MAX_REPORT_ENTRIES = 10_000;
/** Problems listed in one answer; a report with more says so once. */
const MAX_PROBLEMS = 20;

export interface TrafficReport {
  nodeId: Uuid;
  reportId: Uuid;
  userIds: Uuid[];
  bytesUp: number[];
  bytesDown: number[];
}

const isByteCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

const onlyKeys = (value: object, keys: readonly string[]): string | undefined =>
  Object.keys(value).find((key) => !keys.includes(key));

/**
 * Checks a whole traffic report before anything is applied, into flat arrays. A plain loop:
 * class-validator over 10,000 entry objects would cost far more than applying them.
 */
@Injectable()
export class TrafficReportPipe implements PipeTransform<unknown, TrafficReport> {
  transform(body: unknown): TrafficReport {
    const problems: FieldProblem[] = [];
    const problem = (field: string, message: string): void => {
      if (problems.length < MAX_PROBLEMS) problems.push({ field, message });
    };
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw validationFailed([{ field: 'body', message: 'must be an object' }]);
    }
    const report = body as Record<string, unknown>;
    const extra = onlyKeys(report, ['node_id', 'report_id', 'entries']);
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
    for (let i = 0; i < count; i++) {
      const entry: unknown = entries[i];
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        problem(`entries[${i}]`, 'must be an object');
        continue;
      }
      const { user_id: userId, bytes_up: up, bytes_down: down } = entry as Record<string, unknown>;
      const unknownKey = onlyKeys(entry, ['user_id', 'bytes_up', 'bytes_down']);
      if (unknownKey !== undefined) problem(`entries[${i}].${unknownKey}`, 'is not allowed');
      const id = typeof userId === 'string' ? canonicalUuid(userId) : undefined;
      if (id === undefined) problem(`entries[${i}].user_id`, 'must be a UUID');
      else userIds[i] = id;
      if (isByteCount(up)) bytesUp[i] = up;
      else problem(`entries[${i}].bytes_up`, 'must be a whole number of bytes from 0 to 2^53-1');
      if (isByteCount(down)) bytesDown[i] = down;
      else problem(`entries[${i}].bytes_down`, 'must be a whole number of bytes from 0 to 2^53-1');
    }
    if (problems.length > 0) throw validationFailed(problems);
    return {
      nodeId: nodeId!,
      reportId: reportId!,
      userIds,
      bytesUp,
      bytesDown,
    };
  }
}
