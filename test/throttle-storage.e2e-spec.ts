import { PostgresThrottlerStorage } from '../src/common/throttling/postgres-throttler.storage';
import { ThrottleCleanup } from '../src/common/throttling/throttle-cleanup.service';
import { sqlRows } from '../src/database/sql';
import { startTestApp, type TestApp } from './harness/app';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('login throttling stored in PostgreSQL', () => {
  let a: TestApp;
  let b: TestApp;
  let storage: PostgresThrottlerStorage;
  beforeAll(async () => {
    a = await startTestApp({ TRUST_PROXY: '1' });
    // A second instance of the service on the same database, with memory of its own.
    b = await startTestApp({ TRUST_PROXY: '1' }, { database: a.database });
    storage = a.app.get(PostgresThrottlerStorage);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const rowCount = async () =>
    Number(
      (await sqlRows<{ n: string }>(a.dataSource, 'SELECT count(*) AS n FROM throttle_hits'))[0].n,
    );

  it('counts attempts made on two instances as one: the 21st from one address is refused', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      const instance = i % 2 === 0 ? a : b;
      const res = await instance
        .http()
        .post('/api/v1/auth/admin/login')
        .set('X-Forwarded-For', '192.0.2.77')
        .send({ username: `sweep_${i}`, password: 'some guess here' });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 20)).toEqual(Array<number>(20).fill(401));
    expect(statuses[20]).toBe(429);
    // Blocked on the other instance too.
    const other = await b
      .http()
      .post('/api/v1/auth/admin/login')
      .set('X-Forwarded-For', '192.0.2.77')
      .send({ username: 'sweep_x', password: 'some guess here' })
      .expect(429);
    expect(Number(other.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('counts within a window, blocks past the limit without counting, and starts over after the block', async () => {
    const key = `unit-${Date.now()}`;
    const hits = [];
    for (let i = 0; i < 4; i++) hits.push(await storage.increment(key, 60_000, 3, 800, 'test'));
    expect(hits.map((h) => [h.totalHits, h.isBlocked])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(hits[3].timeToBlockExpire).toBe(1);
    expect(hits[0].timeToExpire).toBe(60);
    const whileBlocked = await storage.increment(key, 60_000, 3, 800, 'test');
    expect([whileBlocked.totalHits, whileBlocked.isBlocked]).toEqual([4, true]);
    await sleep(900);
    const after = await storage.increment(key, 60_000, 3, 800, 'test');
    expect([after.totalHits, after.isBlocked, after.timeToBlockExpire]).toEqual([1, false, 0]);
  });

  it('starts a new window once the last one is over', async () => {
    const key = `window-${Date.now()}`;
    await storage.increment(key, 300, 10, 300, 'test');
    expect((await storage.increment(key, 300, 10, 300, 'test')).totalHits).toBe(2);
    await sleep(400);
    expect((await storage.increment(key, 300, 10, 300, 'test')).totalHits).toBe(1);
  });

  it('counts every one of many simultaneous hits on one key exactly once', async () => {
    const key = `race-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 40 }, () => storage.increment(key, 60_000, 100, 60_000, 'test')),
    );
    const counts = results.map((r) => r.totalHits).sort((x, y) => x - y);
    expect(counts).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('keeps one row per key and window, and the clean-up removes expired rows in batches while live ones stay', async () => {
    await a.dataSource.query('DELETE FROM throttle_hits');
    const made = 2_500;
    // In waves, as a pool of 20 connections would serve a flood anyway.
    for (let wave = 0; wave < made; wave += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          storage.increment(`flood-${wave + i}`, 200, 5, 200, 'x'),
        ),
      );
    }
    await storage.increment('flood-0', 200, 5, 200, 'x');
    expect(await rowCount()).toBe(made);
    await sleep(300);
    await storage.increment('live', 60_000, 5, 60_000, 'x');
    const deleted = await a.app.get(ThrottleCleanup).run();
    expect(deleted).toBe(made);
    expect(await rowCount()).toBe(1);
    // The live key still counts on from where it was.
    expect((await storage.increment('live', 60_000, 5, 60_000, 'x')).totalHits).toBe(2);
  });
});
