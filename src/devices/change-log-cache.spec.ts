import { ChangeLogCache, type LoggedChange } from './change-log-cache';

/** A log in memory, with the reads the cache made of it. */
function logOf(changes: LoggedChange[]) {
  const reads: [number, number][] = [];
  let failNext = false;
  return {
    changes,
    reads,
    failNextRead: () => {
      failNext = true;
    },
    read: async (after: number, upTo: number): Promise<LoggedChange[]> => {
      reads.push([after, upTo]);
      await new Promise((resolve) => setImmediate(resolve));
      if (failNext) {
        failNext = false;
        throw new Error('the database went away');
      }
      return changes.filter((c) => c.version > after && c.version <= upTo);
    },
  };
}

describe('the change log cache of the credentials polls', () => {
  it('can tell nothing before its first read, then answers from what it read', async () => {
    const log = logOf([]);
    const cache = new ChangeLogCache(log.read);
    // Its first question starts it at the counter: older versions are not held.
    expect(await cache.mayConcern(3, 10, [1])).toBe(true);
    expect(log.reads).toEqual([]);
    expect(await cache.mayConcern(10, 10, [1])).toBe(false);

    log.changes.push({ version: 11, bucket: 7 }, { version: 13, bucket: 2 });
    expect(await cache.mayConcern(10, 13, [1, 3, 8])).toBe(false);
    expect(await cache.mayConcern(10, 13, [2, 5])).toBe(true);
    expect(await cache.mayConcern(11, 13, [7])).toBe(false);
    expect(await cache.mayConcern(10, 11, [7])).toBe(true);
    expect(await cache.mayConcern(10, 11, [2])).toBe(false);
    // A node that carries every user: any change concerns it.
    expect(await cache.mayConcern(10, 13, null)).toBe(true);
    expect(await cache.mayConcern(13, 13, null)).toBe(false);
    // A version older than what it holds: it cannot tell.
    expect(await cache.mayConcern(9, 13, [1])).toBe(true);
    expect(log.reads).toEqual([[10, 13]]);
  });

  it('reads the log once for polls that ask at once, and again only as the counter moves', async () => {
    const log = logOf([{ version: 4, bucket: 1 }]);
    const cache = new ChangeLogCache(log.read);
    // Its first question starts it at version 1.
    await cache.mayConcern(0, 1, []);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => cache.mayConcern(1, 5, [i % 2 === 0 ? 1 : 9])),
    );
    expect(answers.filter(Boolean)).toHaveLength(25);
    expect(log.reads).toEqual([[1, 5]]);
    // Polls that saw a newer counter while a read was under way read the rest after it.
    log.changes.push({ version: 6, bucket: 9 });
    const [older, newer] = await Promise.all([
      cache.mayConcern(5, 5, [9]),
      cache.mayConcern(5, 6, [9]),
    ]);
    expect([older, newer]).toEqual([false, true]);
    expect(log.reads).toEqual([
      [1, 5],
      [5, 6],
    ]);
  });

  it('starts afresh past a gap wider than it holds, and forgets its oldest changes past its size', async () => {
    const log = logOf(Array.from({ length: 12 }, (_, i) => ({ version: 101 + i, bucket: 1 })));
    const cache = new ChangeLogCache(log.read, 8);
    await cache.mayConcern(0, 1, [1]);
    // 111 versions on: not read, held from 112 on.
    expect(await cache.mayConcern(1, 112, [1])).toBe(true);
    expect(log.reads).toEqual([]);
    expect(await cache.mayConcern(112, 112, [1])).toBe(false);

    const small = new ChangeLogCache(log.read, 8);
    await small.mayConcern(99, 100, [1]);
    expect(await small.mayConcern(100, 106, [2])).toBe(false);
    // 12 changes read, more than 8: the older 6 are let go.
    expect(await small.mayConcern(106, 112, [1])).toBe(true);
    expect(log.reads).toEqual([
      [100, 106],
      [106, 112],
    ]);
    expect(await small.mayConcern(106, 112, [2])).toBe(false);
    expect(await small.mayConcern(105, 112, [2])).toBe(true);
  });

  it('fails the polls waiting on a read that failed, and reads again at the next', async () => {
    const log = logOf([{ version: 3, bucket: 4 }]);
    const cache = new ChangeLogCache(log.read);
    await cache.mayConcern(0, 1, []);
    log.failNextRead();
    await expect(cache.mayConcern(1, 3, [4])).rejects.toThrow('the database went away');
    expect(await cache.mayConcern(1, 3, [4])).toBe(true);
    expect(log.reads).toEqual([
      [1, 3],
      [1, 3],
    ]);
  });
});
