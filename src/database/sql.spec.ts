import { arrayLiteral } from './sql';

describe('arrayLiteral', () => {
  it('joins canonical UUIDs and bigints into an array literal', () => {
    const id = '0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e';
    expect(arrayLiteral([id, id])).toBe(`{${id},${id}}`);
    expect(arrayLiteral([0n, -5n, 9223372036854775807n])).toBe('{0,-5,9223372036854775807}');
    expect(arrayLiteral([])).toBe('{}');
  });

  it('refuses anything that would need quoting', () => {
    for (const bad of ['a,b', '"x"', 'NULL', '0B7C7D7E-1F2A-4B3C-8D4E-5F6A7B8C9D0E', '{}', ' ']) {
      expect(() => arrayLiteral([bad])).toThrow(TypeError);
    }
    for (const bad of [Number.NaN, 1e21, null]) {
      expect(() => arrayLiteral([bad as unknown as bigint])).toThrow(TypeError);
    }
  });
});
