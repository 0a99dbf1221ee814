import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, isUUID, Max, MaxLength, Min } from 'class-validator';
import { validationFailed } from './errors';

export const DEFAULT_PAGE_LIMIT = 50;

/** `?limit=&cursor=` of every paged list (`{items, next_cursor}`). */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_LIMIT, type: 'integer' })
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

/** What every paged list answers. */
export interface Page<T> {
  items: T[];
  /** null on the last page. */
  next_cursor: string | null;
}

/** A page request read: where to start and how many rows. */
export interface PagePosition {
  after: KeysetCursor | null;
  limit: number;
}

/** `?limit=&cursor=` read; a cursor this service did not make is a 400, as on every list. */
export function pagePosition(query: PageQuery): PagePosition {
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  if (query.cursor === undefined || query.cursor === '') return { after: null, limit };
  const after = decodeCursor(query.cursor);
  if (!after) throw validationFailed([{ field: 'cursor', message: 'is not a valid cursor' }]);
  return { after, limit };
}

/** A row as a keyset list selects it: its id and its exact sort key (see `keysetSql`). */
export interface KeysetRow {
  id: string;
  sortKey: string;
}

/**
 * The page out of rows fetched with `limit + 1` (the extra row only tells that another page
 * follows): the first `limit` rows, and the cursor of the last one when there is more.
 */
export function keysetPage<R>(
  rows: R[],
  limit: number,
  cursorOf: (row: R) => KeysetCursor = (row) => {
    const keyed = row as unknown as KeysetRow;
    return { at: keyed.sortKey, id: keyed.id };
  },
): Page<R> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: rows.length > limit && last ? encodeCursor(cursorOf(last)) : null,
  };
}

/** The same page with every item mapped, e.g. to the contract's shape. */
export function mapPage<R, T>(page: Page<R>, map: (item: R) => T): Page<T> {
  return { items: page.items.map(map), next_cursor: page.next_cursor };
}

export interface KeysetOrder {
  /** The timestamptz column the list is sorted by, e.g. `t.created_at`. */
  at: string;
  /** The id column breaking ties, e.g. `t.id`. */
  id: string;
  direction: 'ASC' | 'DESC';
}

/** The SQL parts of one keyset list; `param` adds a bound value and returns its placeholder. */
export interface KeysetSql {
  /** The row's exact sort key (an expression). */
  sortKey: string;
  /** Select this: the sort key as `"sortKey"`. */
  selectSortKey: string;
  /** The rows after the cursor (`TRUE` on the first page). */
  after: string;
  orderBy: string;
}

export function keysetSql(
  order: KeysetOrder,
  after: KeysetCursor | null,
  param: (value: unknown) => string,
): KeysetSql {
  const compare = order.direction === 'ASC' ? '>' : '<';
  return {
    sortKey: cursorAtSql(order.at),
    selectSortKey: `${cursorAtSql(order.at)} AS "sortKey"`,
    after: after
      ? `(${order.at}, ${order.id}) ${compare} (${param(after.at)}::timestamptz, ${param(after.id)}::uuid)`
      : 'TRUE',
    orderBy: `${order.at} ${order.direction}, ${order.id} ${order.direction}`,
  };
}

/** A `param` for `keysetSql` that appends to a positional parameter list (`$n`). */
export function positional(params: unknown[]): (value: unknown) => string {
  return (value) => {
    params.push(value);
    return `$${params.length}`;
  };
}
