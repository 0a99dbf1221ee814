import { QueryFailedError } from 'typeorm';

/** True when PostgreSQL refused a row for the unique index or constraint named. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return (
    driverError.code === '23505' &&
    (constraint === undefined || driverError.constraint === constraint)
  );
}

/**
 * SQLSTATEs of a server that is away or shutting down (class 08 connection exceptions, 57P0x
 * operator intervention) and of a statement cut off by statement_timeout (57014).
 */
const UNAVAILABLE_STATES = /^(08...|57P0[1-3]|57014)$/;
/** Socket errors of a server that cannot be reached. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
]);
/**
 * Messages of `pg` and `pg-pool` for a connection lost or not made in time, or a query the server
 * did not answer within the client's deadline (`query_timeout`, data-source.ts).
 */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Query read timeout/i;

/** True when a query failed because PostgreSQL could not be reached or is restarting. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const candidate of [error, (error as { driverError?: unknown } | null)?.driverError]) {
    // Not `instanceof Error`: socket errors may come from another realm (a VM context in tests).
    if (typeof candidate !== 'object' || candidate === null) continue;
    const { code, message } = candidate as { code?: unknown; message?: unknown };
    if (
      typeof code === 'string' &&
      (UNAVAILABLE_STATES.test(code) || UNREACHABLE_CODES.has(code))
    ) {
      return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
  }
  return false;
}

/**
 * SQLSTATEs of a value PostgreSQL cannot take as it was sent: 22P02 invalid_text_representation
 * (an unpaired surrogate in a json value), 22021 character_not_in_repertoire (bytes that are not
 * UTF-8), 22P05 untranslatable_character (a NUL in a json value).
 */
const INVALID_INPUT_STATES = new Set(['22P02', '22021', '22P05']);

/** True when PostgreSQL refused a value of the request itself, not the service's own SQL. */
export function isInvalidInput(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: unknown }).code;
  return typeof code === 'string' && INVALID_INPUT_STATES.has(code);
}
