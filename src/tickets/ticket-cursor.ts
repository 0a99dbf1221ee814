import { isUUID } from 'class-validator';

/**
 * A keyset position in a ticket list: the sort timestamp with PostgreSQL's full microsecond
 * precision (a JS Date would drop the microseconds and skip or repeat rows) and the ticket id as the
 * tie-breaker. Sent to clients as opaque base64url.
 */
export interface TicketCursor {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, UTC. */
  at: string;
  id: string;
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeCursor(cursor: TicketCursor): string {
  return Buffer.from(`${cursor.at}|${cursor.id}`, 'utf8').toString('base64url');
}

/** The cursor, or null when it is not one this service made (any such value is a 400). */
export function decodeCursor(value: string): TicketCursor | null {
  if (!BASE64URL.test(value)) return null;
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const [at, id, ...rest] = text.split('|');
  if (rest.length > 0 || at === undefined || id === undefined) return null;
  if (!AT.test(at) || !isUUID(id)) return null;
  // Reject impossible dates (month 13, Feb 30, PostgreSQL's missing year 0) before PostgreSQL sees
  // them: its refusal would be a 500.
  if (at.startsWith('0000')) return null;
  const millis = `${at.slice(0, 23)}Z`;
  const parsed = new Date(millis);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString() !== millis) return null;
  return { at, id: id.toLowerCase() };
}
