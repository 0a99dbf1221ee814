import { ShortCache } from './short-cache';

describe('ShortCache', () => {
  it('reads once per period, shares a read in flight, and reads again after the period', async () => {
    let clock = 0;
    let reads = 0;
    const cache = new ShortCache(
      1000,
      () => {
        reads += 1;
        return Promise.resolve(reads);
      },
      () => clock,
    );
    expect(await Promise.all([cache.get(), cache.get(), cache.get()])).toEqual([1, 1, 1]);
    clock = 999;
    expect(await cache.get()).toBe(1);
    clock = 1000;
    expect(await cache.get()).toBe(2);
    expect(reads).toBe(2);
  });

  it('keeps no failed read', async () => {
    let fail = true;
    const cache = new ShortCache(60_000, () =>
      fail ? Promise.reject(new Error('database away')) : Promise.resolve('ok'),
    );
    await expect(cache.get()).rejects.toThrow('database away');
    fail = false;
    expect(await cache.get()).toBe('ok');
  });
});
