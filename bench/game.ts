/**
 * Times the replay of 500-click paths by the game engine, beside a naive implementation measured in
 * the same run so that the numbers can be compared across machines.
 *
 *   node -r ts-node/register/transpile-only bench/game.ts [boards] [rounds]
 */
import {
  type Board,
  type Cell,
  CLEAR_BONUS,
  type Click,
  COLS,
  generateBoard,
  MAX_CLICKS,
  replay,
  type ReplayResult,
  ROWS,
  SameGame,
} from '../src/game/samegame';
import { playedPath } from '../test/harness/samegame-paths';

const BOARDS = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 10);

/** The obvious implementation: a fresh copy of the board per click, recursive flood fill. */
function naiveReplay(board: Board, clicks: readonly Click[]): ReplayResult {
  let grid: Cell[][] = board.map((line) => [...line]);
  let score = 0;
  let remaining = ROWS * COLS;
  for (const [row, col] of clicks) {
    grid = grid.map((line) => [...line]);
    const color = grid[row][col];
    if (color === null) continue;
    const seen = grid.map((line) => line.map(() => false));
    const fill = (r: number, c: number): number => {
      if (r < 0 || r >= ROWS || c < 0 || c >= COLS || seen[r][c] || grid[r][c] !== color) return 0;
      seen[r][c] = true;
      return 1 + fill(r - 1, c) + fill(r + 1, c) + fill(r, c - 1) + fill(r, c + 1);
    };
    const n = fill(row, col);
    if (n < 2) continue;
    for (let r = 0; r < ROWS; r++) for (let c = 0; c < COLS; c++) if (seen[r][c]) grid[r][c] = null;
    const columns: Cell[][] = [];
    for (let c = 0; c < COLS; c++) {
      const column = grid.map((line) => line[c]).filter((cell) => cell !== null);
      if (column.length > 0) columns.push(column);
    }
    grid = Array.from({ length: ROWS }, (_, r) =>
      Array.from({ length: COLS }, (_, c): Cell => {
        const column = columns[c] ?? [];
        const index = column.length - ROWS + r;
        return index >= 0 ? column[index] : null;
      }),
    );
    score += (n - 2) ** 2;
    remaining -= n;
    if (remaining === 0) score += CLEAR_BONUS;
  }
  return { score, cleared: ROWS * COLS - remaining, remaining };
}

/** mulberry32: the same boards and paths on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function measure(
  games: readonly { board: Board; clicks: Click[] }[],
  run: (board: Board, clicks: readonly Click[]) => ReplayResult,
): { mean: number; p50: number; p99: number } {
  for (const { board, clicks } of games) run(board, clicks);
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const { board, clicks } of games) {
      const start = process.hrtime.bigint();
      run(board, clicks);
      samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): number => samples[Math.ceil(samples.length * q) - 1];
  return {
    mean: samples.reduce((s, ms) => s + ms, 0) / samples.length,
    p50: at(0.5),
    p99: at(0.99),
  };
}

function main(): void {
  const random = seeded(20240611);
  const bytes = (n: number): Uint8Array =>
    Uint8Array.from({ length: n }, () => Math.floor(random() * 256));
  const pick = (n: number): number => Math.floor(random() * n);
  const games = Array.from({ length: BOARDS }, () => {
    const board = generateBoard(bytes);
    return { board, clicks: playedPath(board, MAX_CLICKS, pick) };
  });

  // A benchmark of a wrong engine is worthless: both must score every path alike.
  for (const { board, clicks } of games) {
    const a = replay(board, clicks);
    const b = naiveReplay(board, clicks);
    if (a.score !== b.score || a.cleared !== b.cleared) {
      throw new Error(`engine and baseline disagree: ${JSON.stringify({ a, b })}`);
    }
  }
  const moves = games.reduce((sum, { board, clicks }) => sum + moveCount(board, clicks), 0);

  const rows = [
    ['engine (typed array, stack)', measure(games, replay)],
    ['naive (recursive, copy per click)', measure(games, naiveReplay)],
  ] as const;
  const engine = rows[0][1];
  const naive = rows[1][1];
  const line = (cells: string[]): string =>
    `${cells[0].padEnd(36)}${cells
      .slice(1)
      .map((cell) => cell.padStart(11))
      .join('')}\n`;
  process.stdout.write(
    `replay of ${MAX_CLICKS}-click paths: ${BOARDS} boards × ${ROUNDS} rounds, ` +
      `${(moves / BOARDS).toFixed(1)} removing clicks per path on average\n\n`,
  );
  process.stdout.write(line(['implementation', 'mean ms', 'p50 ms', 'p99 ms']));
  for (const [name, t] of rows) {
    process.stdout.write(line([name, t.mean.toFixed(4), t.p50.toFixed(4), t.p99.toFixed(4)]));
  }
  process.stdout.write(
    `\nengine is ${(naive.mean / engine.mean).toFixed(1)}× faster on the mean\n`,
  );
}

function moveCount(board: Board, clicks: readonly Click[]): number {
  const game = new SameGame(board);
  return clicks.filter(([row, col]) => game.click(row, col) > 0).length;
}

main();
