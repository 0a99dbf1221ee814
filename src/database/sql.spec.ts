import { canonicalUuid } from '../common/uuid';
import { bigintArray, statementName, timestamptzArray, uuidArray } from './sql';

/** The bytes of an array parameter after its header, and the header's type oid and length. */
const parts = (buffer: Buffer): { oid: number; count: number; body: string } => ({
  oid: buffer.readInt32BE(8),
  count: buffer.readInt32BE(12),
  body: buffer.subarray(20).toString('hex'),
});

describe('binary array parameters', () => {
  it('writes one dimension from 1, no nulls, then each uuid as its length and 16 bytes', () => {
    const id = canonicalUuid('0B7C7D7E-1F2A-4B3C-8D4E-5F6A7B8C9D0E')!;
    const other = canonicalUuid('ffffffff-0000-4000-8000-000000000001')!;
    const buffer = uuidArray([id, other]);
    expect(buffer.subarray(0, 20).toString('hex')).toBe(
      '00000001' + '00000000' + '00000b86' + '00000002' + '00000001',
    );
    expect(parts(buffer).body).toBe(
      '00000010' +
        '0b7c7d7e1f2a4b3c8d4e5f6a7b8c9d0e' +
        '00000010' +
        'ffffffff000040008000000000000001',
    );
    expect(parts(uuidArray([]))).toEqual({ oid: 2950, count: 0, body: '' });
  });

  it('writes numbers and bigints as big-endian two-complement int8, sign and all', () => {
    const buffer = bigintArray([0, -5, Number.MAX_SAFE_INTEGER, 4294967296, 12n, -1n]);
    expect(parts(buffer)).toEqual({
      oid: 20,
      count: 6,
      body: [
        '0000000000000000',
        'fffffffffffffffb',
        '001fffffffffffff',
        '0000000100000000',
        '000000000000000c',
        'ffffffffffffffff',
      ]
        .map((value) => `00000008${value}`)
        .join(''),
    });
    expect(parts(bigintArray([9223372036854775807n, -9223372036854775808n])).body).toBe(
      '000000087fffffffffffffff' + '000000088000000000000000',
    );
  });

  it('writes dates as microseconds since 2000-01-01 UTC, nulls as null elements', () => {
    const buffer = timestamptzArray([
      new Date('2000-01-01T00:00:00.000Z'),
      null,
      new Date('2026-12-07T13:45:10.123Z'),
      new Date('1999-12-31T23:59:59.999Z'),
    ]);
    // Has nulls: the header's flag.
    expect(buffer.readInt32BE(4)).toBe(1);
    expect(parts(buffer)).toEqual({
      oid: 1184,
      count: 4,
      body:
        '00000008' +
        '0000000000000000' +
        'ffffffff' +
        '00000008' +
        BigInt.asUintN(64, 849_966_310_123_000n).toString(16).padStart(16, '0') +
        '00000008' +
        BigInt.asUintN(64, -1000n).toString(16).padStart(16, '0'),
    });
    expect(timestamptzArray([new Date(0)]).readInt32BE(4)).toBe(0);
    expect(() => timestamptzArray([new Date(Number.NaN)])).toThrow(TypeError);
  });

  it('refuses numbers that are not safe integers, bigints past 64 bits, and other values', () => {
    for (const bad of [Number.NaN, 1e21, 1.5, Infinity, null, undefined, {}, '7']) {
      expect(() => bigintArray([bad as unknown as number])).toThrow(TypeError);
    }
    for (const bad of [9223372036854775808n, -9223372036854775809n]) {
      expect(() => bigintArray([bad])).toThrow(RangeError);
    }
  });
});

describe('prepared statement names', () => {
  const byId = 'SELECT id FROM nodes WHERE id = $1';

  it('gives one text the same name every time, and a name PostgreSQL keeps whole', () => {
    expect(statementName(byId)).toBe(statementName(`SELECT id FROM nodes WHERE id = ${'$1'}`));
    expect(statementName(byId)).toMatch(/^q_[0-9a-f]{24}$/);
    // The same on every instance and after a restart: the text's SHA-256 (`sha256sum` agrees).
    expect(statementName('SELECT 1')).toBe('q_e004ebd5b5532a4b85984a62');
    // Identifiers past 63 bytes are cut, which could make two names one.
    expect(Buffer.byteLength(statementName(byId))).toBeLessThanOrEqual(63);
  });

  it('gives different texts different names, down to one character or white space', () => {
    const texts = [
      byId,
      'SELECT id FROM nodes WHERE id = $2',
      'SELECT id FROM nodes WHERE id = $1 ',
      'select id FROM nodes WHERE id = $1',
      'SELECT id FROM users WHERE id = $1',
      '',
    ];
    const names = texts.map(statementName);
    expect(new Set(names).size).toBe(texts.length);
  });
});
