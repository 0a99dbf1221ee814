import { CachedRead } from './cached-read';

describe('CachedRead', () => {
  // Jest's clock (timers and performance.now): the ttl and the wait pass without sleeping.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('reads once per ttl and shares one read between concurrent callers', async () => {
    let reads = 0;
    const cached = new CachedRead(() => Promise.resolve(++reads), {
      ttlMs: 200,
      timeoutMs: 100,
      onFailure: () => undefined,
    });
    expect(await Promise.all([cached.get(), cached.get(), cached.get()])).toEqual([1, 1, 1]);
    jest.advanceTimersByTime(199);
    expect(await cached.get()).toBe(1);
    jest.advanceTimersByTime(1);
    expect(await cached.get()).toBe(2);
  });

  it('answers with the last value, in time, when a read is slow or fails, and counts the failure', async () => {
    let failures = 0;
    let mode: 'ok' | 'slow' | 'fail' = 'ok';
    let reads = 0;
    let land = (): void => undefined;
    const cached = new CachedRead(
      async () => {
        reads += 1;
        if (mode === 'slow') await new Promise<void>((resolve) => (land = resolve));
        if (mode === 'fail') throw new Error('database is away');
        return reads;
      },
      { ttlMs: 0, timeoutMs: 50, onFailure: () => (failures += 1) },
    );
    expect(await cached.get()).toBe(1);

    mode = 'slow';
    const answer = cached.get();
    await jest.advanceTimersByTimeAsync(50);
    expect(await answer).toBe(1);
    expect(failures).toBe(1);
    // The late read lands for a later scrape.
    land();
    await jest.advanceTimersByTimeAsync(0);
    mode = 'fail';
    expect(await cached.get()).toBe(2);
    expect(failures).toBe(2);
  });

  it('has no value before any read succeeded', async () => {
    const cached = new CachedRead<number>(() => Promise.reject(new Error('down')), {
      ttlMs: 1000,
      timeoutMs: 50,
      onFailure: () => undefined,
    });
    expect(await cached.get()).toBeUndefined();
  });
});
