import { CachedRead } from './cached-read';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CachedRead', () => {
  it('reads once per ttl and shares one read between concurrent callers', async () => {
    let reads = 0;
    const cached = new CachedRead(() => Promise.resolve(++reads), {
      ttlMs: 200,
      timeoutMs: 100,
      onFailure: () => undefined,
    });
    expect(await Promise.all([cached.get(), cached.get(), cached.get()])).toEqual([1, 1, 1]);
    expect(await cached.get()).toBe(1);
    await sleep(250);
    expect(await cached.get()).toBe(2);
  });

  it('answers with the last value, in time, when a read is slow or fails, and counts the failure', async () => {
    let failures = 0;
    let mode: 'ok' | 'slow' | 'fail' = 'ok';
    let reads = 0;
    const cached = new CachedRead(
      async () => {
        reads += 1;
        if (mode === 'slow') await sleep(300);
        if (mode === 'fail') throw new Error('database is away');
        return reads;
      },
      { ttlMs: 0, timeoutMs: 50, onFailure: () => (failures += 1) },
    );
    expect(await cached.get()).toBe(1);

    mode = 'slow';
    const started = Date.now();
    expect(await cached.get()).toBe(1);
    expect(Date.now() - started).toBeLessThan(200);
    expect(failures).toBe(1);
    // The late read lands for a later scrape.
    await sleep(300);
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
