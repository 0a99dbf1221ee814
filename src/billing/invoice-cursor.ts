import { isUUID } from 'class-validator';

/**
 * A keyset position in an invoice list (newest first): `created_at` with PostgreSQL's microseconds
 * (a JS Date would drop them and skip or repeat rows) and the id as the tie-breaker. Opaque
 * base64url to clients.
 */
export interface InvoiceCursor {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, UTC. */
  at: string;
  id: string;
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeCursor(cursor: InvoiceCursor): string {
  return Buffer.from(`${cursor.at}|${cursor.id}`, 'utf8').toString('base64url');
}

/** The cursor, or null when it is not one this service made. */
export function decodeCursor(value: string): InvoiceCursor | null {
  if (!BASE64URL.test(value)) return null;
  const [at, id, ...rest] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || at === undefined || id === undefined) return null;
  if (!AT.test(at) || !isUUID(id) || at.startsWith('0000')) return null;
  // An impossible date (month 13) would make PostgreSQL fail: refuse it here.
  const millis = `${at.slice(0, 23)}Z`;
  const parsed = new Date(millis);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString() !== millis) return null;
  return { at, id: id.toLowerCase() };
}
