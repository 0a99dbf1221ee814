import { hostileInputProblem, MAX_INPUT_DEPTH, MAX_INPUT_ENTRIES } from './hostile-input';

/** `depth` arrays, one in another, around `inner`. */
const nestedArrays = (depth: number, inner: unknown = 1): unknown => {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

describe('hostileInputProblem', () => {
  it('passes ordinary bodies, queries and plain values', () => {
    expect(hostileInputProblem({ a: [1, 'x', { b: null }], c: { d: true } })).toBeNull();
    expect(hostileInputProblem(nestedArrays(MAX_INPUT_DEPTH - 1))).toBeNull();
    expect(hostileInputProblem('text')).toBeNull();
    expect(hostileInputProblem(undefined)).toBeNull();
  });

  it('names the field of each kind of problem by the keys and indexes on its way', () => {
    const entries = Array.from({ length: 5 }, () => ({ user_id: 'u', bytes_up: 1 }));
    entries[3].user_id = 'a\u0000b';
    expect(hostileInputProblem({ node_id: 'n', entries })).toEqual({
      field: 'entries.3.user_id',
      message: 'must not contain NUL characters',
    });
    expect(hostileInputProblem({ list: ['ok', ['x\u0000']] })).toEqual({
      field: 'list.1.0',
      message: 'must not contain NUL characters',
    });
    expect(hostileInputProblem({ a: { 'b\u0000': 1 } })).toEqual({
      field: 'a',
      message: 'keys must not contain NUL characters',
    });
    expect(hostileInputProblem(JSON.parse('{"a":[{"__proto__":{"x":1}}]}'))).toEqual({
      field: 'a.0.__proto__',
      message: 'is not an accepted field name',
    });
    expect(hostileInputProblem({ seed: nestedArrays(MAX_INPUT_DEPTH + 5) })).toEqual({
      field: `seed${'.0'.repeat(MAX_INPUT_DEPTH - 1)}`,
      message: `is nested deeper than ${MAX_INPUT_DEPTH} levels`,
    });
    expect(hostileInputProblem('\u0000')).toEqual({
      field: 'body',
      message: 'must not contain NUL characters',
    });
  });

  it('counts keys and elements of the whole body against its budget', () => {
    const wide = { a: [1, 2], b: { list: Array.from({ length: MAX_INPUT_ENTRIES }, () => 0) } };
    expect(hostileInputProblem(wide)).toEqual({
      field: 'b.list',
      message: `holds more than ${MAX_INPUT_ENTRIES} fields and elements`,
    });
    expect(hostileInputProblem(wide, MAX_INPUT_ENTRIES + 10)).toBeNull();
    expect(
      hostileInputProblem(
        Array.from({ length: 11 }, () => 0),
        10,
      ),
    ).toEqual({
      field: 'body',
      message: 'holds more than 10 fields and elements',
    });
  });
});
