import { randomUUID } from 'node:crypto';
import {
  CANONICAL_UUID,
  canonicalUuid,
  sortedUuids,
  uuidOrder,
  type Uuid,
  uuidRangesDescending,
  WHOLE_UUID_RANGE,
  writeUuidBytes,
} from './uuid';

describe('canonicalUuid', () => {
  it('gives the lower-case form of a UUID in either case, and nothing for anything else', () => {
    expect(canonicalUuid('0B7C7D7E-1F2A-4B3C-8D4E-5F6A7B8C9D0E')).toBe(
      '0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
    );
    for (const bad of ['a,b', '"x"', 'NULL', '{}', ' ', '0b7c7d7e1f2a4b3c8d4e5f6a7b8c9d0e']) {
      expect(canonicalUuid(bad)).toBeUndefined();
    }
    expect(canonicalUuid('0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e}')).toBeUndefined();
    expect(canonicalUuid('0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0E')).toBe(
      '0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
    );
    expect(canonicalUuid('0b7c7d7e-1f2a-4b3c-8d4e-5f6a7b8c9d0g')).toBeUndefined();
  });

  it('agrees with CANONICAL_UUID on the lower-cased text, one character changed anywhere', () => {
    const id = randomUUID();
    const byExpression = (value: string): string | undefined =>
      CANONICAL_UUID.test(value.toLowerCase()) ? value.toLowerCase() : undefined;
    const values = [id, id.slice(1), `${id}0`, `0${id}`, id.toUpperCase()];
    for (let at = 0; at < id.length; at++) {
      for (const other of ['0', 'f', 'F', 'g', '-', ' ', 'é', '\u0130', '\u{1f600}']) {
        values.push(id.slice(0, at) + other + id.slice(at + 1));
      }
    }
    for (const value of values)
      expect([value, canonicalUuid(value)]).toEqual([value, byExpression(value)]);
  });
});

describe('sortedUuids', () => {
  it("puts ids in the order of their 16 bytes, which is PostgreSQL's uuid order, keeping repeats", () => {
    const ids = Array.from({ length: 2_000 }, () => canonicalUuid(randomUUID())!);
    ids.push(ids[0], canonicalUuid('ffffffff-0000-4000-8000-00000000000a')!);
    ids.push(canonicalUuid('ffffffff-0000-4000-8000-000000000009')!);
    const bytes = (id: Uuid): Buffer => {
      const out = Buffer.alloc(16);
      writeUuidBytes(id, out, 0);
      return out;
    };
    const byBytes = [...ids].sort((a, b) => Buffer.compare(bytes(a), bytes(b)));
    expect(sortedUuids(ids)).toEqual(byBytes);
  });

  it('orders ids alike in their first digits by the rest, and lists of every small length', () => {
    // A fifth share their first 8 digits with another id, some all 32.
    const ids = Array.from({ length: 3_000 }, (_, i) => {
      const id = randomUUID();
      return canonicalUuid(i % 5 === 0 ? `0000abcd${id.slice(8)}` : id)!;
    });
    ids.push(ids[0], ids[5], canonicalUuid('0000abcd-0000-4000-8000-000000000000')!);
    expect(sortedUuids(ids)).toEqual([...ids].sort());
    for (let length = 0; length <= 5; length++) {
      const few = ids.slice(0, length).reverse();
      expect(sortedUuids(few)).toEqual([...few].sort());
    }
  });

  it('gives the indexes of repeated ids in the order given, in short lists and long', () => {
    for (const length of [10, 1_000]) {
      const distinct = Array.from({ length }, () => canonicalUuid(randomUUID())!);
      // Every id three times, spread over the list.
      const ids = [...distinct, ...[...distinct].reverse(), ...distinct];
      const order = Array.from(uuidOrder(ids));
      expect(order.map((i) => ids[i])).toEqual([...ids].sort());
      for (let k = 0; k < order.length; k += 3) {
        const [a, b, c] = order.slice(k, k + 3);
        expect(a < b && b < c).toBe(true);
      }
    }
  });

  it('leaves the list it was given as it was', () => {
    const ids = Array.from({ length: 100 }, () => canonicalUuid(randomUUID())!);
    const given = [...ids];
    sortedUuids(ids);
    expect(ids).toEqual(given);
  });
});

describe('writeUuidBytes', () => {
  it('writes the 16 bytes the hex digits spell, at the offset, and nothing else', () => {
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const target = Buffer.alloc(2 + 16 * ids.length, 0xee);
    ids.forEach((id, i) => writeUuidBytes(id, target, 1 + 16 * i));
    expect(target[0]).toBe(0xee);
    expect(target[target.length - 1]).toBe(0xee);
    expect(target.subarray(1, -1).toString('hex')).toBe(ids.join('').replaceAll('-', ''));
  });
});

describe('uuidRangesDescending', () => {
  it('cuts the whole space into adjoining ranges, highest first, each id in exactly one', () => {
    const ranges = uuidRangesDescending(7);
    expect(ranges).toHaveLength(7);
    expect(ranges[0].upTo).toBe(WHOLE_UUID_RANGE.upTo);
    expect(ranges[6].after).toBe(WHOLE_UUID_RANGE.after);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i].upTo).toBe(ranges[i - 1].after);
    const ids = sortedUuids(Array.from({ length: 2_000 }, () => randomUUID() as Uuid));
    const holding = ids.map(
      (id) => ranges.filter((range) => id > range.after && id <= range.upTo).length,
    );
    expect(new Set(holding)).toEqual(new Set([1]));
    // Random ids fall evenly: each of 7 ranges holds about 2,000 / 7.
    for (const range of ranges) {
      const inside = ids.filter((id) => id > range.after && id <= range.upTo).length;
      expect(inside).toBeGreaterThan(200);
      expect(inside).toBeLessThan(380);
    }
  });

  it('one range is the whole space', () => {
    expect(uuidRangesDescending(1)).toEqual([WHOLE_UUID_RANGE]);
    expect(uuidRangesDescending(0)).toEqual([WHOLE_UUID_RANGE]);
  });
});
