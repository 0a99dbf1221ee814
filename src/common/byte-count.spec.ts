import { randomUUID } from 'node:crypto';
import { addBytes, sumByUser } from './byte-count';
import { canonicalUuid, type Uuid } from './uuid';

const MAX = Number.MAX_SAFE_INTEGER;

describe('addBytes', () => {
  it('adds in numbers up to 2^53 - 1 and exactly in BigInt past it', () => {
    expect(addBytes(1, 2)).toBe(3);
    expect(addBytes(MAX - 1, 1)).toBe(MAX);
    expect(addBytes(MAX, 1)).toBe(BigInt(MAX) + 1n);
    expect(addBytes(MAX, MAX)).toBe(2n * BigInt(MAX));
    expect(addBytes(5n, 1)).toBe(6n);
    expect(addBytes(1, 5n)).toBe(6n);
  });
});

describe('sumByUser', () => {
  it('sums the entries of each user, users in uuid order, each once, exact past 2^53', () => {
    const users = Array.from({ length: 500 }, () => canonicalUuid(randomUUID())!);
    const ids: Uuid[] = [];
    const bytes: (number | bigint)[] = [];
    const expected = new Map<Uuid, bigint>();
    for (let i = 0; i < 3_000; i++) {
      const user = users[(i * 7919) % users.length];
      const count = i % 97 === 0 ? MAX - i : i % 13 === 0 ? BigInt(MAX) * 3n : i;
      ids.push(user);
      bytes.push(count);
      expected.set(user, (expected.get(user) ?? 0n) + BigInt(count));
    }
    const summed = sumByUser(ids, bytes);
    expect(summed.ids).toEqual([...users].sort());
    expect(new Map(summed.ids.map((id, i) => [id, BigInt(summed.bytes[i])]))).toEqual(expected);
    // Small sums stay numbers.
    expect(sumByUser([users[0], users[0]], [2, 3])).toEqual({ ids: [users[0]], bytes: [5] });
    expect(sumByUser([], [])).toEqual({ ids: [], bytes: [] });
  });
});
