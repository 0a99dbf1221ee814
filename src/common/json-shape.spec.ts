import { jsonShapeProblem } from './json-shape';

const LIMITS = { maxDepth: 4, maxEntries: 5 };
const shape = (json: string) => jsonShapeProblem(Buffer.from(json), LIMITS);

describe('jsonShapeProblem', () => {
  it('counts keys and array elements, not what strings hold', () => {
    expect(shape('{"a":1,"b":[1,2],"c":{}}')).toBeNull(); // 3 keys + 2 elements
    expect(shape('{"a":1,"b":[1,2,3],"c":{}}')).toBe('too-many-entries');
    expect(shape('{"a:b,c:d,e:f,g:h":"[[[[[,,,,:::"}')).toBeNull();
    expect(shape('{"a\\"":"\\\\","b":"\\":::::"}')).toBeNull();
    expect(shape('[[],[],[],[],[]]')).toBeNull();
    expect(shape('[[],[],[],[],[],[]]')).toBe('too-many-entries');
    expect(shape('[ ]')).toBeNull();
    expect(shape('{"ключ":"значение, с запятыми: и двоеточиями"}')).toBeNull();
    // Backslashes before a quote: an odd count escapes it, an even count does not.
    expect(shape('{"a":"\\\\\\"[[[[[[,,,,,,","b":1}')).toBeNull();
    expect(shape('{"a":"\\\\","b":[1,2,3,4]}')).toBe('too-many-entries');
    expect(shape('["never closed, ,,,,,')).toBeNull();
    // A plain Uint8Array, not a Buffer, is read the same way.
    const plain = new Uint8Array(Buffer.from('{"a":"x,y,z","b":[1,2,3]}'));
    expect(jsonShapeProblem(plain, LIMITS)).toBeNull();
    expect(jsonShapeProblem(plain, { maxDepth: 4, maxEntries: 4 })).toBe('too-many-entries');
  });

  it('counts depth, the root being level 1', () => {
    expect(shape('[[[[1]]]]')).toBeNull();
    expect(shape('[[[[[1]]]]]')).toBe('too-deep');
    expect(shape('{"a":{"b":{"c":{"d":1}}}}')).toBeNull();
    expect(shape('{"a":{"b":{"c":{"d":{}}}}}')).toBe('too-deep');
    expect(shape('[[[["[[[[[[["]]]]')).toBeNull();
    expect(jsonShapeProblem(Buffer.from('['.repeat(24_000)), LIMITS)).toBe('too-deep');
  });

  it('agrees with the parsed value on generated bodies', () => {
    const entriesOf = (value: unknown): number =>
      Array.isArray(value)
        ? value.length + value.reduce((sum: number, item) => sum + entriesOf(item), 0)
        : typeof value === 'object' && value !== null
          ? Object.keys(value).length +
            Object.values(value).reduce((sum: number, item) => sum + entriesOf(item), 0)
          : 0;
    const bodies = [
      { a: [1, [2, 3], { b: 'x,y:z' }], c: { d: [], e: [[]] } },
      [{}, { a: 1 }, [null, true, '"]'], 'ü'],
      { 'k,:': ['[', '{', '\\'] },
    ];
    for (const body of bodies) {
      const entries = entriesOf(body);
      const json = Buffer.from(JSON.stringify(body, null, 1));
      expect(jsonShapeProblem(json, { maxDepth: 10, maxEntries: entries })).toBeNull();
      expect(jsonShapeProblem(json, { maxDepth: 10, maxEntries: entries - 1 })).toBe(
        'too-many-entries',
      );
    }
  });
});
