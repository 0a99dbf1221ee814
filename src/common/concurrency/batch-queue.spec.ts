import { BatchQueue, sharedStatement } from './batch-queue';

/** A statement's round trip: what is submitted meanwhile waits for the next batch. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('BatchQueue', () => {
  afterEach(() => jest.useRealTimers());

  /** Records each batch; item 'bad' fails on its own, item 'boom' fails its whole batch. */
  function recorder(batch = 10, waiting = 100) {
    const batches: string[][] = [];
    const group = new BatchQueue<string, string>(
      async (items) => {
        batches.push(items);
        await turn();
        if (items.includes('boom')) throw new Error('batch failed');
        return items.map((item) =>
          item === 'bad'
            ? { status: 'rejected', reason: new Error(item) }
            : { status: 'fulfilled', value: item.toUpperCase() },
        );
      },
      (item) => item.length,
      { batch, waiting, full: () => new Error('full') },
    );
    return { group, batches };
  }

  it('the first item starts alone; what arrives meanwhile goes in the next batch', async () => {
    const { group, batches } = recorder();
    const results = await Promise.all(['a', 'b', 'c'].map((item) => group.submit(item)));
    expect(results).toEqual(['A', 'B', 'C']);
    expect(batches).toEqual([['a'], ['b', 'c']]);
  });

  it('a batch stops at the weight limit, but one heavy item still goes alone', async () => {
    const { group, batches } = recorder(4);
    await Promise.all(['a', 'bb', 'cc', 'd', 'eeeeeeee', 'f'].map((item) => group.submit(item)));
    expect(batches).toEqual([['a'], ['bb', 'cc'], ['d'], ['eeeeeeee'], ['f']]);
  });

  it('what waits is bounded: past the limit an item is refused at once; the first never is', async () => {
    const { group, batches } = recorder(10, 4);
    const settled = Promise.allSettled(
      ['aaaaaaaa', 'bb', 'cc', 'd'].map((item) => group.submit(item)),
    );
    expect((await settled).map((result) => result.status)).toEqual([
      'fulfilled', // running, not waiting
      'fulfilled',
      'fulfilled',
      'rejected', // 2 + 2 waiting already
    ]);
    expect(batches).toEqual([['aaaaaaaa'], ['bb', 'cc']]);
    // Once those are done there is room again.
    await expect(group.submit('dddd')).resolves.toBe('DDDD');
  });

  it('each item settles on its own; a thrown batch fails only its own items', async () => {
    const { group } = recorder();
    const settled = await Promise.allSettled(['a', 'bad', 'c'].map((item) => group.submit(item)));
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);

    const first = group.submit('x');
    const doomed = Promise.allSettled([group.submit('boom'), group.submit('y')]);
    await expect(first).resolves.toBe('X');
    expect((await doomed).map((result) => result.status)).toEqual(['rejected', 'rejected']);
    await expect(group.submit('z')).resolves.toBe('Z');
  });

  it('a shared statement answers each item of a batch from one read', async () => {
    const reads: number[][] = [];
    const squares = sharedStatement(
      async (items: number[]) => {
        reads.push(items);
        await turn();
        return items.map((item) => item * item);
      },
      'busy',
      1_000,
    );
    expect(await Promise.all([1, 2, 3, 4].map((item) => squares.submit(item)))).toEqual([
      1, 4, 9, 16,
    ]);
    expect(reads).toEqual([[1], [2, 3, 4]]);
  });

  it('an item that waited past its time fails without reaching the statement; later ones run', async () => {
    const reads: number[][] = [];
    let release = () => {};
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const queue = sharedStatement(
      async (items: number[]) => {
        reads.push(items);
        if (items.includes(0)) await stuck; // a statement held by a lock
        return items;
      },
      'busy',
      100,
    );
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const first = queue.submit(0);
    let settled = 0;
    const waiting = [1, 2, 3].map((item) =>
      queue.submit(item).catch((error: unknown) => ((settled += 1), error)),
    );
    await jest.advanceTimersByTimeAsync(99);
    expect(settled).toBe(0);
    // Failed at their deadline, while the stuck statement still runs.
    await jest.advanceTimersByTimeAsync(1);
    expect(settled).toBe(3);
    const dropped = await Promise.all(waiting);
    for (const error of dropped) {
      expect(error).toMatchObject({
        status: 503,
        code: 'UPSTREAM_UNAVAILABLE',
        headers: { 'Retry-After': '1' },
      });
    }
    const late = queue.submit(4);
    release();
    expect(await first).toBe(0);
    expect(await late).toBe(4);
    expect(reads).toEqual([[0], [4]]);
  });
});
