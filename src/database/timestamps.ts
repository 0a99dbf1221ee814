import { type CustomTypesConfig, types } from 'pg';

const TIMESTAMPTZ = types.builtins.TIMESTAMPTZ;
/** `pg`'s own parser of `timestamptz` text (postgres-date), for every form `fromCanonical` leaves. */
const libraryParse = types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => unknown;

/**
 * `pg`'s type parsers with `timestamptz` read faster in the form PostgreSQL writes it with
 * `DateStyle` ISO (`2026-12-07 23:39:11.123456+00`, `+05:30`): every signed-in request's session
 * read carries up to seven of them, and postgres-date's regular expressions cost about 1.5 % of
 * the service's CPU at the fleet's scale (bench/RESULTS.md, issue 46). Any other form (a year
 * before 1000 or after 9999, BC, infinity, an offset with seconds) is postgres-date's, and the
 * result is the same Date either way (`timestamps.spec.ts` holds the two side by side).
 */
export const FAST_TIMESTAMPS: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ && format !== 'binary'
      ? parseTimestamptz
      : types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};

/** `text` as postgres-date reads it: `fromCanonical`'s Date, or the library's. */
export function parseTimestamptz(text: string): unknown {
  return fromCanonical(text) ?? libraryParse(text);
}

/** Digit `at` of `text`, or -1 when that character is not a digit. */
function digit(text: string, at: number): number {
  const code = text.charCodeAt(at) - 48;
  return code >= 0 && code <= 9 ? code : -1;
}

/** The whole number written by the digits `from` to `to` (exclusive) of `text`; -1 if one is not. */
function number(text: string, from: number, to: number): number {
  let value = 0;
  for (let at = from; at < to; at++) {
    const d = digit(text, at);
    if (d < 0) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * `YYYY-MM-DD HH:MM:SS[.f…]±HH[:MM]` with a year from 1000 to 9999 and 1 to 6 digits of fraction
 * (milliseconds truncated, as postgres-date truncates them), else null.
 */
export function fromCanonical(text: string): Date | null {
  const length = text.length;
  if (
    length < 22 ||
    text.charCodeAt(4) !== 0x2d || // -
    text.charCodeAt(7) !== 0x2d ||
    text.charCodeAt(10) !== 0x20 || // space
    text.charCodeAt(13) !== 0x3a || // :
    text.charCodeAt(16) !== 0x3a
  ) {
    return null;
  }
  const year = number(text, 0, 4);
  const month = number(text, 5, 7);
  const day = number(text, 8, 10);
  const hour = number(text, 11, 13);
  const minute = number(text, 14, 16);
  const second = number(text, 17, 19);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  let at = 19;
  let ms = 0;
  if (text.charCodeAt(at) === 0x2e) {
    // .
    const start = ++at;
    while (at < length && digit(text, at) >= 0) at++;
    const digits = at - start;
    if (digits < 1 || digits > 6) return null;
    const first = number(text, start, Math.min(at, start + 3));
    ms = digits >= 3 ? first : first * (digits === 1 ? 100 : 10);
  }
  const sign = text.charCodeAt(at);
  if (sign !== 0x2b && sign !== 0x2d) return null; // + or -
  const offsetHours = number(text, at + 1, at + 3);
  let offsetMinutes = 0;
  if (length === at + 6 && text.charCodeAt(at + 3) === 0x3a) {
    offsetMinutes = number(text, at + 4, at + 6);
  } else if (length !== at + 3) {
    return null;
  }
  if (offsetHours < 0 || offsetMinutes < 0) return null;
  const offsetMs = (sign === 0x2b ? 1 : -1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs);
}
