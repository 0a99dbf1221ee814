import { types } from 'pg';
import { FAST_TIMESTAMPS, fromCanonical, parseTimestamptz } from './timestamps';

const library = types.getTypeParser(types.builtins.TIMESTAMPTZ, 'text') as (
  text: string,
) => unknown;

/** What a parse gave, comparable: a Date's time (NaN as text), or the value itself. */
const seen = (value: unknown): unknown =>
  value instanceof Date ? `Date ${String(value.getTime())}` : value;

describe('timestamptz as PostgreSQL writes it', () => {
  const canonical = [
    '2026-12-07 23:39:11+00',
    '2026-12-07 23:39:11.1+00',
    '2026-12-07 23:39:11.12+00',
    '2026-12-07 23:39:11.123+00',
    '2026-12-07 23:39:11.1234+00',
    '2026-12-07 23:39:11.123456+00',
    '2026-12-07 23:39:11.999999+00',
    '2026-12-07 23:39:11.000001+00',
    '2026-12-07 05:30:00+05:30',
    '2026-12-07 05:30:00.5-09:30',
    '2026-01-01 00:00:00-03',
    '2026-01-01 00:00:00+14',
    '2024-02-29 12:00:00+00',
    '1970-01-01 00:00:00+00',
    '1000-01-01 00:00:00+00',
    '9999-12-31 23:59:59.999999+00',
  ];
  const others = [
    '0999-12-31 23:59:59+00',
    '0050-06-01 00:00:00+00',
    '12345-01-01 00:00:00+00',
    '2026-12-07 23:39:11+00 BC',
    '0001-01-01 00:00:00+00 BC',
    '1880-01-01 00:00:00+00:53:28',
    '2026-12-07 23:39:11.1234567+00',
    '2026-12-07 23:39:11.+00',
    '2026-12-07T23:39:11+00',
    '2026-12-07 23:39:11',
    '2026-12-07 23:39:11Z',
    '2026-12-07 23:39:1a+00',
    '2026-12-07 23:39:11+0a',
    '2026-12-07 23:39:11+05:3',
    '2026-12-07',
    'infinity',
    '-infinity',
    '',
  ];

  it('reads the canonical form itself, to the same Date as postgres-date', () => {
    for (const text of canonical) {
      const date = fromCanonical(text);
      expect(date).toBeInstanceOf(Date);
      expect([text, seen(date)]).toEqual([text, seen(library(text))]);
    }
  });

  it('leaves every other form to postgres-date, with its answer', () => {
    for (const text of others) {
      expect([text, fromCanonical(text)]).toEqual([text, null]);
      expect([text, seen(parseTimestamptz(text))]).toEqual([text, seen(library(text))]);
    }
  });

  it('agrees with postgres-date on 20,000 random instants, offsets and precisions', () => {
    const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');
    let state = 46;
    const random = (below: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % below;
    };
    for (let i = 0; i < 20_000; i++) {
      const date = new Date(Date.UTC(1000 + random(9000), random(12), 1 + random(28)));
      const fraction =
        random(7) === 0 ? '' : `.${pad(random(1_000_000), 6).slice(0, 1 + random(6))}`;
      const minutes = (random(2) === 0 ? 1 : -1) * random(15 * 60);
      const offset =
        `${minutes < 0 ? '-' : '+'}${pad(Math.trunc(minutes / 60))}` +
        (minutes % 60 === 0 && random(2) === 0 ? '' : `:${pad(minutes % 60)}`);
      const text =
        `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
        `${pad(random(24))}:${pad(random(60))}:${pad(random(60))}${fraction}${offset}`;
      expect([text, seen(parseTimestamptz(text))]).toEqual([text, seen(library(text))]);
    }
  });

  it('is what the parsers hand out for timestamptz text, and only for it', () => {
    const { getTypeParser } = FAST_TIMESTAMPS as {
      getTypeParser: (oid: number, format?: string) => unknown;
    };
    expect(getTypeParser(types.builtins.TIMESTAMPTZ, 'text')).toBe(parseTimestamptz);
    expect(getTypeParser(types.builtins.TIMESTAMPTZ)).toBe(parseTimestamptz);
    for (const oid of [types.builtins.TIMESTAMP, types.builtins.INT8, types.builtins.DATE]) {
      expect(getTypeParser(oid, 'text')).toBe(types.getTypeParser(oid, 'text'));
    }
    expect(getTypeParser(types.builtins.TIMESTAMPTZ, 'binary')).toBe(
      types.getTypeParser(types.builtins.TIMESTAMPTZ, 'binary'),
    );
  });
});
