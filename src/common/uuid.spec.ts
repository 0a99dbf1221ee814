import { randomUUID } from 'node:crypto';
import { canonicalUuid, sortedUuids, type Uuid, writeUuidBytes } from './uuid';

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

describe('sortedUuids', () => {
  const uuid = (value: string): Uuid => canonicalUuid(value)!;

  it('puts random ids in code-unit order, which is PostgreSQL uuid order', () => {
    const ids = Array.from({ length: 5_000 }, () => uuid(randomUUID()));
    expect(sortedUuids(ids)).toEqual([...ids].sort());
    expect(sortedUuids([])).toEqual([]);
  });

  it('orders ids that share their first 32 bits, and keeps repeats', () => {
    const ids = [
      'ffffffff-0000-4000-8000-000000000002',
      '00000000-ffff-4000-8000-000000000000',
      'ffffffff-0000-4000-8000-000000000001',
      '00000000-0000-4000-8000-000000000000',
      'ffffffff-0000-4000-8000-000000000002',
      '7fffffff-ffff-4fff-bfff-ffffffffffff',
      '00000000-0000-4000-8000-00000000000a',
    ].map(uuid);
    expect(sortedUuids(ids)).toEqual([
      '00000000-0000-4000-8000-000000000000',
      '00000000-0000-4000-8000-00000000000a',
      '00000000-ffff-4000-8000-000000000000',
      '7fffffff-ffff-4fff-bfff-ffffffffffff',
      'ffffffff-0000-4000-8000-000000000001',
      'ffffffff-0000-4000-8000-000000000002',
      'ffffffff-0000-4000-8000-000000000002',
    ]);
    const shared = Array.from({ length: 2_000 }, () => uuid(`abcdef01${randomUUID().slice(8)}`));
    expect(sortedUuids(shared)).toEqual([...shared].sort());
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
