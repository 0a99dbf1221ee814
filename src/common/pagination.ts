import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, isUUID, Max, MaxLength, Min } from 'class-validator';

export const DEFAULT_PAGE_LIMIT = 50;

/** `?limit=&cursor=` of every paged list (`{items, next_cursor}`). */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_LIMIT, type: Number })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: "a previous page's next_cursor (opaque)" })
  // `?cursor=` (empty) means the first page on every list.
  @Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value))
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

/**
 * A keyset position in a list ordered by a timestamp and the row id: the timestamp with
 * PostgreSQL's full microsecond precision (a JS Date would drop the microseconds and skip or
 * repeat rows) and the id as the tie-breaker. Sent to clients as opaque base64url.
 */
export interface KeysetCursor {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, UTC. */
  at: string;
  id: string;
}

/** SQL that renders a timestamptz column in the cursor's `at` form. */
export const cursorAtSql = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const BASE64URL = /^[A-Za-z0-9_-]{1,200}$/;

export function encodeCursor(cursor: KeysetCursor): string {
  return Buffer.from(`${cursor.at}|${cursor.id}`, 'utf8').toString('base64url');
}

/** The cursor, or null when it is not one this service made (the caller answers 400). */
export function decodeCursor(value: string): KeysetCursor | null {
  if (!BASE64URL.test(value)) return null;
  const [at, id, ...rest] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || at === undefined || id === undefined) return null;
  if (!AT.test(at) || !isUUID(id) || at.startsWith('0000')) return null;
  // Impossible dates (month 13, Feb 30, year 0) are refused here: PostgreSQL's refusal would be a 500.
  const millis = `${at.slice(0, 23)}Z`;
  const parsed = new Date(millis);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString() !== millis) return null;
  return { at, id: id.toLowerCase() };
}
