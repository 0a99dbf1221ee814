import {
  type Board,
  type Click,
  COLS,
  CLEAR_BONUS,
  MAX_CLICKS,
  replay,
  ROWS,
  SameGame,
} from '../src/game/samegame';
import type { AppError } from '../src/common/errors';
import { GameService } from '../src/game/game.service';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface RoundRow {
  user_id: string;
  board: Board;
  status: string;
  score: number | null;
  cleared: number | null;
  clicks: Click[] | null;
  ttl_s: number;
}

/** The tiles of the orthogonally connected one-colour group at `[row, col]`, computed here. */
function groupSize(board: Board, row: number, col: number): number {
  const color = board[row][col];
  const seen = new Set<string>();
  const todo: Click[] = [[row, col]];
  while (todo.length > 0) {
    const [r, c] = todo.pop() as Click;
    const key = `${r},${c}`;
    if (r < 0 || r >= ROWS || c < 0 || c >= COLS || seen.has(key) || board[r][c] !== color) {
      continue;
    }
    seen.add(key);
    todo.push([r - 1, c], [r + 1, c], [r, c - 1], [r, c + 1]);
  }
  return seen.size;
}

/** The first tile of the full board that has a neighbour of its own colour. */
function firstGroup(board: Board): Click {
  for (let r = 0; r < ROWS; r++) {
    for (let c = 0; c < COLS; c++) {
      if (groupSize(board, r, c) >= 2) return [r, c];
    }
  }
  throw new Error('board without any group');
}

/** Plays until no group is left, with a no-op click on a hole now and then. */
function greedyPath(board: Board): Click[] {
  const game = new SameGame(board);
  const path: Click[] = [];
  for (;;) {
    const cells = game.toCells();
    let found: Click | null = null;
    for (let r = 0; r < ROWS && !found; r++) {
      for (let c = 0; c < COLS && !found; c++) {
        const color = cells[r][c];
        if (color === null) continue;
        if ((cells[r + 1]?.[c] ?? null) === color || (cells[r][c + 1] ?? null) === color) {
          found = [r, c];
        }
      }
    }
    if (!found) return path;
    if (game.click(found[0], found[1]) > 0) path.push(found);
    if (path.length % 3 === 0) path.push([0, 0]);
  }
}

/** `left` columns of colour 0, the rest a 1/2 checkerboard of lonely tiles. */
function stripedBoard(left: number): Board {
  return Array.from({ length: ROWS }, (_, r) =>
    Array.from({ length: COLS }, (_, c) => (c < left ? 0 : 1 + ((r + c) % 2))),
  );
}

const UNIFORM_SCORE = (ROWS * COLS - 2) ** 2 + CLEAR_BONUS; // one click clears it all
const HALVES_SCORE = 2 * 48 ** 2 + CLEAR_BONUS; // two halves of 50, one click each
const SEVENTY_SCORE = 68 ** 2; // one click on a group of 70

describe('board game', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const start = async (u: TestUser): Promise<{ round_id: string; board: Board }> => {
    const res = await t.http().post('/api/v1/game/rounds').set(u.bearer).expect(201);
    return res.body as { round_id: string; board: Board };
  };
  const score = (u: TestUser, roundId: string, body: unknown) =>
    t
      .http()
      .post(`/api/v1/game/rounds/${roundId}/score`)
      .set(u.bearer)
      .send(body as object);
  const row = async (roundId: string): Promise<RoundRow> => {
    const rows = (await t.dataSource.query(
      `SELECT user_id, board, status, score, cleared, clicks,
              extract(epoch FROM expires_at - created_at)::int AS ttl_s
         FROM game_rounds WHERE id = $1`,
      [roundId],
    )) as RoundRow[];
    return rows[0];
  };
  const setBoard = (roundId: string, board: Board) =>
    t.dataSource.query('UPDATE game_rounds SET board = $1::jsonb WHERE id = $2', [
      JSON.stringify(board),
      roundId,
    ]);

  /** Opens enough pooled connections that racing requests really run side by side. */
  const warmPool = () =>
    Promise.all(Array.from({ length: 12 }, () => t.dataSource.query('SELECT pg_sleep(0.05)')));

  it('start: a stored 10×10 board of colours 0..3 that expires in 15 minutes', async () => {
    const u = await newUser(t);
    const before = Date.now();
    const res = await t.http().post('/api/v1/game/rounds').set(u.cookieHeaders).expect(201);
    expect(Object.keys(res.body).sort()).toEqual(['board', 'colors', 'expires_at', 'round_id']);
    expect(res.body.round_id).toMatch(UUID);
    expect(res.body.colors).toBe(4);
    const board = res.body.board as Board;
    expect(board).toHaveLength(10);
    for (const line of board) {
      expect(line).toHaveLength(10);
      for (const cell of line) expect([0, 1, 2, 3]).toContain(cell);
    }
    const expiresAt = Date.parse(res.body.expires_at);
    expect(expiresAt - before).toBeGreaterThan(14 * 60_000);
    expect(expiresAt - before).toBeLessThanOrEqual(15 * 60_000 + 5_000);

    const stored = await row(res.body.round_id);
    expect(stored).toMatchObject({ user_id: u.user.id, board, status: 'open', score: null });
    expect(stored.ttl_s).toBe(15 * 60);

    const other = await start(u);
    expect(other.board).not.toEqual(board); // 4^100 boards: equal only if not random
  });

  it('score: one click on a real group, then 409 ROUND_FINISHED', async () => {
    const u = await newUser(t);
    const { round_id: id, board } = await start(u);
    const [r, c] = firstGroup(board);
    const n = groupSize(board, r, c);

    const res = await score(u, id, { clicks: [[r, c]] }).expect(200);
    expect(res.body).toEqual({ score: (n - 2) ** 2, cleared: n, remaining: 100 - n });
    expect(await row(id)).toMatchObject({
      status: 'finished',
      score: (n - 2) ** 2,
      cleared: n,
      clicks: [[r, c]],
    });

    const again = await score(u, id, { clicks: [] }).expect(409);
    expect(again.body).toMatchObject({ statusCode: 409, code: 'ROUND_FINISHED' });
    expect(await row(id)).toMatchObject({ score: (n - 2) ** 2, clicks: [[r, c]] });
  });

  it('score: a long path gives the engine’s result; empty path scores 0', async () => {
    const u = await newUser(t);
    const { round_id: id, board } = await start(u);
    const path = greedyPath(board);
    expect(path.length).toBeGreaterThan(5);
    const res = await score(u, id, { clicks: path }).expect(200);
    expect(res.body).toEqual(replay(board, path));
    expect(res.body.cleared + res.body.remaining).toBe(100);
    expect((await row(id)).clicks).toEqual(path);

    const empty = await start(u);
    await score(u, empty.round_id, { clicks: [] })
      .expect(200)
      .expect((r) => expect(r.body).toEqual({ score: 0, cleared: 0, remaining: 100 }));
  });

  it('an expired round is 409 ROUND_EXPIRED and stays unscored', async () => {
    const u = await newUser(t);
    const { round_id: id } = await start(u);
    await t.dataSource.query(
      `UPDATE game_rounds SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    const res = await score(u, id, { clicks: [] }).expect(409);
    expect(res.body).toMatchObject({ code: 'ROUND_EXPIRED' });
    expect(await row(id)).toMatchObject({ status: 'open', score: null, clicks: null });
  });

  it('malformed clicks are 400 and leave the round open', async () => {
    const u = await newUser(t);
    const { round_id: id, board } = await start(u);
    const cases: [unknown, string][] = [
      [{ clicks: [[10, 0]] }, 'clicks[0]'],
      [{ clicks: [[0]] }, 'clicks[0]'],
      [{ clicks: [['a', 1]] }, 'clicks[0]'],
      [
        {
          clicks: [
            [0, 0],
            [0, -1],
          ],
        },
        'clicks[1]',
      ],
      [{ clicks: [[1.5, 0]] }, 'clicks[0]'],
      [{ clicks: [[0, 0, 0]] }, 'clicks[0]'],
      [{ clicks: [{ 0: 1, 1: 1 }] }, 'clicks[0]'],
      [{ clicks: [['1', '1']] }, 'clicks[0]'],
      [{ clicks: Array.from({ length: MAX_CLICKS + 1 }, () => [0, 0]) }, 'clicks'],
      [{ clicks: 'a' }, 'clicks'],
      [{}, 'clicks'],
      [{ clicks: [], extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await score(u, id, body);
      expect([JSON.stringify(body).slice(0, 40), res.status]).toEqual([
        JSON.stringify(body).slice(0, 40),
        400,
      ]);
      expect(res.body.code).toBe('VALIDATION_FAILED');
      expect(res.body.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field })]),
      );
    }
    expect(await row(id)).toMatchObject({ status: 'open', score: null, clicks: null });

    const full = Array.from({ length: MAX_CLICKS }, (): Click => [9, 9]);
    const res = await score(u, id, { clicks: full }).expect(200);
    expect(res.body).toEqual(replay(board, full));
  });

  it('another user’s round is 404 NOT_FOUND, as is an unknown one', async () => {
    const owner = await newUser(t);
    const stranger = await newUser(t, 'moderator');
    const { round_id: id } = await start(owner);
    const res = await score(stranger, id, { clicks: [] }).expect(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
    await score(owner, '00000000-0000-4000-8000-000000000000', { clicks: [] })
      .expect(404)
      .expect((r) => expect(r.body.code).toBe('NOT_FOUND'));
    expect(await row(id)).toMatchObject({ status: 'open', score: null });
    await score(owner, id, { clicks: [] }).expect(200);
  });

  it('starting a new round abandons the open one', async () => {
    const u = await newUser(t);
    const first = await start(u);
    const second = await start(u);
    expect((await row(first.round_id)).status).toBe('abandoned');
    expect((await row(second.round_id)).status).toBe('open');
    await score(u, first.round_id, { clicks: [] })
      .expect(409)
      .expect((r) => expect(r.body.code).toBe('ROUND_FINISHED'));
    expect((await row(first.round_id)).score).toBeNull();
    await score(u, second.round_id, { clicks: [] }).expect(200);

    // Concurrent starts still leave exactly one open round.
    const started = await Promise.all(Array.from({ length: 5 }, () => start(u)));
    const open = (await t.dataSource.query(
      `SELECT id FROM game_rounds WHERE user_id = $1 AND status = 'open'`,
      [u.user.id],
    )) as { id: string }[];
    expect(open).toHaveLength(1);
    expect(started.map((s) => s.round_id)).toContain(open[0].id);
  });

  it('10 concurrent submissions: exactly one is scored', async () => {
    const u = await newUser(t);
    const { round_id: id, board } = await start(u);
    await warmPool();
    const paths = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? greedyPath(board) : []));
    const results = await Promise.all(paths.map((clicks) => score(u, id, { clicks })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect([r.status, r.body.code]).toEqual([409, 'ROUND_FINISHED']);
    }
    const stored = await row(id);
    expect(stored).toMatchObject({ status: 'finished', score: ok[0].body.score });
    expect(replay(board, stored.clicks as Click[])).toEqual(ok[0].body);
  });

  it('10 racing scorings in the service: the conditional update lets one through', async () => {
    // HTTP requests reach the service a few ms apart; direct calls all read the open round first.
    const u = await newUser(t);
    const { round_id: id } = await start(u);
    const game = t.app.get(GameService);
    await warmPool();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () => game.score(u.user.id, id, [])),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect((o.reason as AppError).code).toBe('ROUND_FINISHED');
    }
  });

  it('leaderboard: best score per user, ties by who reached it first, top 20', async () => {
    const play = async (u: TestUser, board: Board, clicks: Click[], expected: number) => {
      const { round_id: id } = await start(u);
      await setBoard(id, board);
      const res = await score(u, id, { clicks }).expect(200);
      expect(res.body.score).toBe(expected);
    };
    const uniform = stripedBoard(COLS);
    const halves = Array.from({ length: ROWS }, () =>
      Array.from({ length: COLS }, (_, c) => (c < 5 ? 0 : 1)),
    );
    // Created in one order, reaching the top score in the reverse one.
    const [z, y, x, c] = [await newUser(t), await newUser(t), await newUser(t), await newUser(t)];
    await play(x, stripedBoard(7), [[0, 0]], SEVENTY_SCORE);
    await play(x, uniform, [[5, 5]], UNIFORM_SCORE);
    await play(y, uniform, [[0, 0]], UNIFORM_SCORE);
    await play(z, uniform, [[9, 9]], UNIFORM_SCORE);
    await play(
      c,
      halves,
      [
        [0, 0],
        [0, 0],
      ],
      HALVES_SCORE,
    );
    await play(c, halves, [], 0);
    const fillers: TestUser[] = [];
    for (let i = 0; i < 17; i++) {
      const f = await newUser(t);
      await play(f, stripedBoard(7), [[9, 0]], SEVENTY_SCORE);
      fillers.push(f);
    }

    const res = await t.http().get('/api/v1/game/leaderboard').expect(200);
    expect(res.body).toHaveLength(20);
    expect(res.body).toEqual([
      { user_id: x.user.id, best_score: UNIFORM_SCORE },
      { user_id: y.user.id, best_score: UNIFORM_SCORE },
      { user_id: z.user.id, best_score: UNIFORM_SCORE },
      { user_id: c.user.id, best_score: HALVES_SCORE },
      ...fillers.slice(0, 16).map((f) => ({ user_id: f.user.id, best_score: SEVENTY_SCORE })),
    ]);
  });

  it('access: anonymous start is 401, leaderboard is public, non-UUID id is 400', async () => {
    await t
      .http()
      .post('/api/v1/game/rounds')
      .expect(401)
      .expect((r) => expect(r.body.code).toBe('UNAUTHENTICATED'));
    await t
      .http()
      .post('/api/v1/game/rounds/00000000-0000-4000-8000-000000000000/score')
      .send({ clicks: [] })
      .expect(401);
    await t.http().get('/api/v1/game/leaderboard').expect(200);

    const u = await newUser(t);
    const res = await score(u, 'not-a-uuid', { clicks: [] }).expect(400);
    expect(res.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'id', message: 'must be a UUID', rule: 'isUuid' }],
    });
    const rounds = (await t.dataSource.query(
      'SELECT count(*)::int AS n FROM game_rounds WHERE user_id = $1',
      [u.user.id],
    )) as { n: number }[];
    expect(rounds[0].n).toBe(0);
  });
});
