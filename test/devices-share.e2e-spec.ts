/**
 * The share-bucket rule in its two forms (`shareBucket` in TypeScript, `share_bucket_of` in SQL)
 * give the same bucket for the same users, and the database refuses a device row that disagrees.
 */
import { randomUUID } from 'node:crypto';
import { SHARE_BUCKETS, shareBucket } from '../src/devices/share';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';

describe('share buckets: TypeScript and SQL agree', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('gives every user the same bucket in both forms, spread over all of them', async () => {
    const ids = Array.from({ length: 20_000 }, () => randomUUID());
    ids.push('00000000-0000-4000-8000-000000000000', 'ffffffff-ffff-4fff-bfff-ffffffffffff');
    const rows = (await t.dataSource.query(
      `SELECT u::text AS id, share_bucket_of(u) AS bucket FROM unnest($1::uuid[]) u`,
      [ids],
    )) as { id: string; bucket: number }[];
    for (const row of rows) expect([row.id, row.bucket]).toEqual([row.id, shareBucket(row.id)]);
    const buckets = new Set(rows.map((row) => row.bucket));
    expect(Math.min(...buckets)).toBe(0);
    expect(Math.max(...buckets)).toBe(SHARE_BUCKETS - 1);
    // 20,000 users over 4,096 buckets: nearly every bucket has some.
    expect(buckets.size).toBeGreaterThan(SHARE_BUCKETS * 0.95);
  });

  it('refuses a device whose bucket is not its user’s', async () => {
    const user = await newUser(t, 'seed');
    const wrong = (shareBucket(user.user.id) + 1) % SHARE_BUCKETS;
    await expect(
      t.dataSource.query(
        `INSERT INTO devices (user_id, share_bucket, name, source) VALUES ($1, $2, 'x', 'link')`,
        [user.user.id, wrong],
      ),
    ).rejects.toThrow(/CHK_devices_share_bucket/);
  });
});
