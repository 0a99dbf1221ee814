import { canonicalUuid } from '../common/uuid';
import { arrayLiteral } from './sql';

describe('arrayLiteral', () => {
  it('joins canonical UUIDs and whole numbers into an array literal', () => {
    const id = canonicalUuid('0B7C7D7E-1F2A-4B3C-8D4E-5F6A7B8C9D0E')!;
    expect(arrayLiteral([id, id])).toBe(
      '{0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e,0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e}',
    );
    expect(arrayLiteral([0n, -5n, 9223372036854775807n])).toBe('{0,-5,9223372036854775807}');
    expect(arrayLiteral([0, 7, Number.MAX_SAFE_INTEGER, 12n])).toBe('{0,7,9007199254740991,12}');
    expect(arrayLiteral([])).toBe('{}');
  });

  it('refuses numbers that are not safe integers, and other values', () => {
    for (const bad of [Number.NaN, 1e21, 1.5, Infinity, null, undefined, {}]) {
      expect(() => arrayLiteral([bad as unknown as number])).toThrow(TypeError);
    }
  });
});

describe('canonicalUuid', () => {
  it('gives the lower-case form of a UUID in either case, and nothing for anything else', () => {
    expect(canonicalUuid('0B7C7D7E-1F2A-4B3C-8D4E-5F6A7B8C9D0E')).toBe(
      '0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
    );
    for (const bad of ['a,b', '"x"', 'NULL', '{}', ' ', '0b7c7d7e1f2a4b3c8d4e5f6a7b8c9d0e']) {
      expect(canonicalUuid(bad)).toBeUndefined();
    }
    expect(canonicalUuid('0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e}')).toBeUndefined();
  });
});
