import { randomBytes } from 'node:crypto';
import { AuthCleanupJob } from '../src/auth/auth.jobs';
import { GameCleanupJob } from '../src/game/game.jobs';
import { startTestApp, TRUSTED_ORIGIN, type TestApp } from './harness/app';
import { newUser } from './harness/factories';

/** The clean-up removes what no rule needs any more, and nothing a rule still needs. */
describe('clean-up of expired rows', () => {
  jest.setTimeout(120_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const q = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    t.dataSource.query(sql, params) as Promise<T[]>;
  const count = async (sql: string, params: unknown[] = []) =>
    (await q<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n;

  it('deletes expired codes, tokens and sessions in batches, keeps the live ones and reuse detection', async () => {
    const u = await newUser(t, 'seed');
    // A rotated refresh token still within its lifetime: presenting it again must still be reuse.
    await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: u.cookie, Origin: TRUSTED_ORIGIN })
      .expect(200);
    // 12,000 refresh sessions past their expiry (more than two batches), rotated, revoked or not.
    await q(
      `INSERT INTO refresh_sessions (user_id, family_id, token_hash, expires_at, rotated_at, revoked_at)
       SELECT $1, gen_random_uuid(), decode(md5(i::text) || md5((i + 1)::text), 'hex'),
              now() - interval '1 minute',
              CASE WHEN i % 3 = 0 THEN now() END, CASE WHEN i % 3 = 1 THEN now() END
         FROM generate_series(1, 12000) i`,
      [u.user.id],
    );
    for (let i = 0; i < 3; i++) {
      await q(
        `INSERT INTO login_codes (code_hash, poll_secret_hash, expires_at)
         VALUES ($1, $2, now() - interval '1 second'), ($3, $4, now() + interval '10 minutes')`,
        [randomBytes(32), randomBytes(32), randomBytes(32), randomBytes(32)],
      );
      await q(
        `INSERT INTO bootstrap_tokens (token_hash, user_id, expires_at)
         VALUES ($1, $3, now() - interval '1 second'), ($2, $3, now() + interval '5 minutes')`,
        [randomBytes(32), randomBytes(32), u.user.id],
      );
    }

    const deleted = await t.app.get(AuthCleanupJob).run();
    expect(deleted).toEqual({
      refresh_sessions: 12_000,
      login_codes: 3,
      bootstrap_tokens: 3,
    });
    expect(await count('refresh_sessions WHERE expires_at < now()')).toBe(0);
    expect(await count('login_codes')).toBe(3);
    expect(await count('bootstrap_tokens')).toBe(3);

    const reused = await t
      .http()
      .post('/api/v1/auth/refresh')
      .set({ Cookie: u.cookie, Origin: TRUSTED_ORIGIN })
      .expect(401);
    expect(reused.body.code).toBe('REFRESH_REUSED');
  });

  it("deletes game rounds the leaderboard no longer needs, keeping each player's best", async () => {
    const players = [await newUser(t, 'seed'), await newUser(t, 'seed')];
    const board = JSON.stringify([[0]]);
    for (const [i, p] of players.entries()) {
      // Old finished rounds: the best (one tie reached later), worse ones; a recent worse one; an
      // old abandoned one and an old open one that expired.
      await q(
        `INSERT INTO game_rounds (user_id, board, status, score, cleared, expires_at, finished_at)
         VALUES ($1, $2, 'finished', $3, 10, now() - interval '9 days', now() - interval '9 days'),
                ($1, $2, 'finished', $3, 10, now() - interval '8 days', now() - interval '8 days'),
                ($1, $2, 'finished', 5, 10, now() - interval '7 days', now() - interval '7 days'),
                ($1, $2, 'finished', 6, 10, now() - interval '3 days', now() - interval '3 days'),
                ($1, $2, 'finished', 1, 10, now(), now()),
                ($1, $2, 'abandoned', NULL, NULL, now() - interval '5 days', now() - interval '5 days'),
                ($1, $2, 'open', NULL, NULL, now() - interval '5 days', NULL)`,
        [p.user.id, board, 100 + i],
      );
    }
    const leaderboard = async () =>
      (await t.http().get('/api/v1/game/leaderboard').expect(200)).body as unknown[];
    const before = await leaderboard();

    expect(await t.app.get(GameCleanupJob).run()).toBe(10);
    for (const [i, p] of players.entries()) {
      const left = await q<{ score: number | null; old: boolean }>(
        `SELECT score, finished_at < now() - interval '1 day' AS old
           FROM game_rounds WHERE user_id = $1 ORDER BY finished_at`,
        [p.user.id],
      );
      expect(left).toEqual([
        { score: 100 + i, old: true },
        { score: 1, old: false },
      ]);
    }
    expect(await leaderboard()).toEqual(before);
  });
});
