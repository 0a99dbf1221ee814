import { CachedRead } from './cached-read';

describe('CachedRead', () => {
  // Jest's clock (timers and performance.now): the ttl and the wait pass without sleeping.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('reads once per ttl, shares a read in flight, and reads again after the ttl', async () => {
    let reads = 0;
    const cached = new CachedRead(() => Promise.resolve(++reads), 1000);
    expect(await Promise.all([cached.get(), cached.get(), cached.get()])).toEqual([1, 1, 1]);
    jest.advanceTimersByTime(999);
    expect(await cached.get()).toBe(1);
    jest.advanceTimersByTime(1);
    expect(await cached.get()).toBe(2);
    expect(reads).toBe(2);
  });

  it('keeps no failed read', async () => {
    let fail = true;
    const cached = new CachedRead(
      () => (fail ? Promise.reject(new Error('database away')) : Promise.resolve('ok')),
      60_000,
    );
    await expect(cached.get()).rejects.toThrow('database away');
    fail = false;
    expect(await cached.get()).toBe('ok');
  });

  it('answers within its wait with the last value when a read is slow or fails, and counts the failure', async () => {
    let failures = 0;
    let mode: 'ok' | 'slow' | 'fail' = 'ok';
    let reads = 0;
    let land = (): void => undefined;
    const cached = new CachedRead(async () => {
      reads += 1;
      if (mode === 'slow') await new Promise<void>((resolve) => (land = resolve));
      if (mode === 'fail') throw new Error('database is away');
      return reads;
    }, 0);
    const onFailure = () => (failures += 1);
    expect(await cached.within(50, onFailure)).toBe(1);

    mode = 'slow';
    const answer = cached.within(50, onFailure);
    await jest.advanceTimersByTimeAsync(50);
    expect(await answer).toBe(1);
    expect(failures).toBe(1);
    // The late read lands for a later caller.
    land();
    await jest.advanceTimersByTimeAsync(0);
    mode = 'fail';
    expect(await cached.within(50, onFailure)).toBe(2);
    expect(failures).toBe(2);
  });

  it('has no value within its wait before any read succeeded', async () => {
    const cached = new CachedRead<number>(() => Promise.reject(new Error('down')), 1000);
    expect(await cached.within(50, () => undefined)).toBeUndefined();
  });
});
