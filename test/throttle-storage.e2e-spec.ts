import { ThrottleCleanup } from '../src/common/throttling/throttle-cleanup.service';
import { ThrottleHitsRepository } from '../src/common/throttling/throttle-hits.repository';
import { sqlRows } from '../src/database/sql';
import { startTestApp, type TestApp } from './harness/app';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('login throttling stored in PostgreSQL', () => {
  let a: TestApp;
  let b: TestApp;
  let counters: ThrottleHitsRepository;
  beforeAll(async () => {
    a = await startTestApp({ TRUST_PROXY: '1' });
    // A second instance of the service on the same database, with memory of its own.
    b = await startTestApp({ TRUST_PROXY: '1' }, { database: a.database });
    counters = a.app.get(ThrottleHitsRepository);
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
    for (let i = 0; i < 4; i++) hits.push(await counters.hit(key, 60_000, 3, 800));
    expect(hits.map((h) => [h.hits, h.blockedForS > 0])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(hits[3].blockedForS).toBe(1);
    expect(hits[0].expiresInS).toBe(60);
    const whileBlocked = await counters.hit(key, 60_000, 3, 800);
    expect([whileBlocked.hits, whileBlocked.blockedForS > 0]).toEqual([4, true]);
    await sleep(900);
    const after = await counters.hit(key, 60_000, 3, 800);
    expect([after.hits, after.blockedForS > 0, after.blockedForS]).toEqual([1, false, 0]);
  });

  it('starts a new window once the last one is over', async () => {
    const key = `window-${Date.now()}`;
    await counters.hit(key, 300, 10, 300);
    expect((await counters.hit(key, 300, 10, 300)).hits).toBe(2);
    await sleep(400);
    expect((await counters.hit(key, 300, 10, 300)).hits).toBe(1);
  });

  it('counts every one of many simultaneous hits on one key exactly once', async () => {
    const key = `race-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 40 }, () => counters.hit(key, 60_000, 100, 60_000)),
    );
    const counts = results.map((r) => r.hits).sort((x, y) => x - y);
    expect(counts).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('keeps one row per key and window, and the clean-up removes expired rows in batches while live ones stay', async () => {
    await a.dataSource.query('DELETE FROM throttle_hits');
    const made = 2_500;
    // In waves, as a pool of 20 connections would serve a flood anyway.
    for (let wave = 0; wave < made; wave += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => counters.hit(`flood-${wave + i}`, 200, 5, 200)),
      );
    }
    await counters.hit('flood-0', 200, 5, 200);
    expect(await rowCount()).toBe(made);
    await sleep(300);
    await counters.hit('live', 60_000, 5, 60_000);
    const deleted = await a.app.get(ThrottleCleanup).run();
    expect(deleted).toBe(made);
    expect(await rowCount()).toBe(1);
    // The live key still counts on from where it was.
    expect((await counters.hit('live', 60_000, 5, 60_000)).hits).toBe(2);
  });
});
