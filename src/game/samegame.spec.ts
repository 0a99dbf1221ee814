import * as fc from 'fast-check';
import {
  type Board,
  type Cell,
  CLEAR_BONUS,
  type Click,
  COLORS,
  COLS,
  generateBoard,
  MAX_CLICKS,
  replay,
  ROWS,
  SameGame,
  validateClicks,
} from './samegame';
import { playedPath } from '../../test/harness/samegame-paths';

const SIZE = ROWS * COLS;

/** A board from a colour function of (row, col). */
function boardOf(color: (row: number, col: number) => number): Board {
  return Array.from({ length: ROWS }, (_, row) =>
    Array.from({ length: COLS }, (_, col) => color(row, col)),
  );
}

/** Colours 0 and 1 alternating: no tile has a neighbour of its colour, so every click is a no-op. */
const checker = (row: number, col: number): number => (row + col) % 2;

function tilesOf(cells: Cell[][]): number {
  return cells.flat().filter((cell) => cell !== null).length;
}

function columnOf(cells: Cell[][], col: number): Cell[] {
  return cells.map((line) => line[col]);
}

/** Tiles rest on the bottom or on another tile, and no empty column sits left of a non-empty one. */
function settled(cells: Cell[][]): boolean {
  let sawEmptyColumn = false;
  for (let col = 0; col < COLS; col++) {
    const column = columnOf(cells, col);
    const firstTile = column.findIndex((cell) => cell !== null);
    if (firstTile === -1) {
      sawEmptyColumn = true;
      continue;
    }
    if (sawEmptyColumn) return false;
    if (column.slice(firstTile).some((cell) => cell === null)) return false;
  }
  return true;
}

/**
 * The rules written as plainly as possible (recursion, a new grid per click), as an oracle for the
 * engine. It shares no code with it.
 */
function referencePlay(board: Board, clicks: readonly Click[]): { score: number; grid: Cell[][] } {
  let grid: Cell[][] = board.map((line) => [...line]);
  let score = 0;
  for (const [row, col] of clicks) {
    const color = grid[row][col];
    if (color === null) continue;
    const seen = grid.map((line) => line.map(() => false));
    const group: Click[] = [];
    const visit = (r: number, c: number): void => {
      if (r < 0 || r >= ROWS || c < 0 || c >= COLS || seen[r][c] || grid[r][c] !== color) return;
      seen[r][c] = true;
      group.push([r, c]);
      visit(r - 1, c);
      visit(r + 1, c);
      visit(r, c - 1);
      visit(r, c + 1);
    };
    visit(row, col);
    if (group.length < 2) continue;
    for (const [r, c] of group) grid[r][c] = null;
    score += (group.length - 2) ** 2;
    const columns = Array.from({ length: COLS }, (_, c) =>
      columnOf(grid, c).filter((cell) => cell !== null),
    ).filter((column) => column.length > 0);
    grid = Array.from({ length: ROWS }, (_, r) =>
      Array.from({ length: COLS }, (_, c): Cell => {
        const column = columns[c] ?? [];
        const index = column.length - ROWS + r;
        return index >= 0 ? column[index] : null;
      }),
    );
    if (tilesOf(grid) === 0) score += CLEAR_BONUS;
  }
  return { score, grid };
}

/** Cells that a click would clear, by a plain scan of the rows: the oracle of `SameGame.clickable`. */
function clickableByScan(cells: Cell[][]): Click[] {
  const out: Click[] = [];
  for (let row = 0; row < ROWS; row++) {
    for (let col = 0; col < COLS; col++) {
      const color = cells[row][col];
      if (color === null) continue;
      if (
        cells[row - 1]?.[col] === color ||
        cells[row + 1]?.[col] === color ||
        cells[row][col - 1] === color ||
        cells[row][col + 1] === color
      ) {
        out.push([row, col]);
      }
    }
  }
  return out;
}

/** A small seeded PRNG (mulberry32), so the timing test replays the same paths on every run. */
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

describe('replay', () => {
  it('clears a one-colour board in one click: (100 - 2)² plus the bonus', () => {
    expect(
      replay(
        boardOf(() => 2),
        [[4, 7]],
      ),
    ).toEqual({
      score: 98 ** 2 + CLEAR_BONUS,
      cleared: 100,
      remaining: 0,
    });
  });

  it('makes the tiles above a removed group fall', () => {
    // Column 0, rows 8 and 9 form a pair of colour 2 under a checkerboard.
    const board = boardOf((row, col) => (col === 0 && row >= 8 ? 2 : checker(row, col)));
    const game = new SameGame(board);

    expect(game.click(9, 0)).toBe(2);

    const cells = game.toCells();
    expect(columnOf(cells, 0)).toEqual([null, null, ...columnOf(board, 0).slice(0, 8)]);
    for (let col = 1; col < COLS; col++) expect(columnOf(cells, col)).toEqual(columnOf(board, col));
    expect(game.result()).toEqual({ score: 0, cleared: 2, remaining: 98 });
  });

  it('closes an emptied column, and later clicks address the shifted board', () => {
    // Column 3 is one group of colour 2; (9, 2) and (9, 4) are colour 3, lonely until it goes.
    const board = boardOf((row, col) => {
      if (col === 3) return 2;
      if (row === 9 && (col === 2 || col === 4)) return 3;
      return checker(row, col);
    });
    const game = new SameGame(board);

    expect(game.click(9, 2)).toBe(0);
    expect(game.click(0, 3)).toBe(10);
    const shifted = game.toCells();
    expect(columnOf(shifted, 3)).toEqual(columnOf(board, 4));
    expect(columnOf(shifted, 8)).toEqual(columnOf(board, 9));
    expect(columnOf(shifted, 9)).toEqual(Array(ROWS).fill(null));

    // The two 3s now touch: (9, 2) and the former (9, 4), now at (9, 3).
    expect(game.click(9, 2)).toBe(2);
    expect(game.click(0, 9)).toBe(0);
    expect(game.result()).toEqual({ score: 8 ** 2, cleared: 12, remaining: 88 });
    expect(
      replay(board, [
        [9, 2],
        [0, 3],
        [9, 2],
        [0, 9],
      ]),
    ).toEqual(game.result());
  });

  it('adds the clear bonus once, only when the last tile goes', () => {
    const halves = boardOf((_, col) => (col < 5 ? 0 : 1));
    // The right half shifts into columns 0..4 after the first click.
    expect(
      replay(halves, [
        [0, 0],
        [9, 0],
        [9, 0],
        [5, 5],
      ]),
    ).toEqual({ score: 2 * 48 ** 2 + CLEAR_BONUS, cleared: 100, remaining: 0 });

    const oneLeft = boardOf((row, col) => (row === 0 && col === 0 ? 1 : 0));
    expect(replay(oneLeft, [[9, 9]])).toEqual({ score: 97 ** 2, cleared: 99, remaining: 1 });
  });

  it('does nothing on a lonely tile or an empty cell', () => {
    expect(
      replay(boardOf(checker), [
        [0, 0],
        [5, 4],
        [9, 9],
      ]),
    ).toEqual({ score: 0, cleared: 0, remaining: 100 });

    const board = boardOf((row, col) => (col === 0 && row >= 8 ? 2 : checker(row, col)));
    // After the pair goes, (0, 0) and (1, 0) are empty.
    expect(
      replay(board, [
        [9, 0],
        [0, 0],
        [1, 0],
      ]),
    ).toEqual({ score: 0, cleared: 2, remaining: 98 });
  });

  it('scores a group of two as zero but still removes it', () => {
    const board = boardOf((row, col) => (row === 9 && col < 2 ? 3 : checker(row, col)));
    expect(replay(board, [[9, 1]])).toEqual({ score: 0, cleared: 2, remaining: 98 });
  });

  it('leaves the board and the clicks it was given untouched', () => {
    const board = boardOf((row) => row % 2);
    const clicks: Click[] = [
      [0, 0],
      [9, 9],
      [5, 5],
    ];
    const boardCopy = structuredClone(board);
    const clicksCopy = structuredClone(clicks);
    replay(board, clicks);
    expect(board).toEqual(boardCopy);
    expect(clicks).toEqual(clicksCopy);
  });

  it('refuses a malformed board or an off-board click instead of reading out of bounds', () => {
    expect(() => replay([[0]], [])).toThrow(RangeError);
    expect(() =>
      replay(
        boardOf(() => COLORS),
        [],
      ),
    ).toThrow(RangeError);
    expect(() =>
      replay(
        boardOf(() => 0.5),
        [],
      ),
    ).toThrow(RangeError);
    expect(() => replay(boardOf(checker), [[10, 0]])).toThrow(RangeError);
    expect(() => replay(boardOf(checker), [[0, 1.5]])).toThrow(RangeError);
  });
});

describe('validateClicks', () => {
  const valid: Click[] = [
    [0, 0],
    [9, 9],
    [4, 5],
  ];

  it.each<[string, unknown]>([
    ['a row of 10', [10, 0]],
    ['a column of 10', [0, 10]],
    ['a single number', [0]],
    ['three numbers', [0, 1, 2]],
    ['a string', ['a', 1]],
    ['a numeric string', ['1', 1]],
    ['a fraction', [1.5, 2]],
    ['a negative', [-1, 0]],
    ['NaN', [NaN, 0]],
    ['null', null],
    ['an object', { row: 0, col: 0 }],
  ])('rejects %s and names the click', (_, click) => {
    expect(validateClicks([...valid, click, [1, 1]])).toEqual({
      ok: false,
      problems: [{ field: 'clicks[3]', message: expect.any(String) }],
    });
  });

  it('lists every bad click', () => {
    const result = validateClicks([[0, 0], [-1, 0], [1, 1], 'x']);
    expect(result).toEqual({
      ok: false,
      problems: [
        { field: 'clicks[1]', message: 'row must be an integer from 0 to 9' },
        { field: 'clicks[3]', message: 'must be a pair [row, col]' },
      ],
    });
  });

  it.each<[string, unknown]>([
    ['an object', { clicks: [] }],
    ['a string', '[[0,0]]'],
    ['null', null],
    ['undefined', undefined],
  ])('rejects %s instead of an array', (_, value) => {
    expect(validateClicks(value)).toEqual({
      ok: false,
      problems: [{ field: 'clicks', message: expect.any(String) }],
    });
  });

  it(`accepts ${MAX_CLICKS} clicks and rejects ${MAX_CLICKS + 1}`, () => {
    const path = Array.from({ length: MAX_CLICKS + 1 }, (_, i): Click => [i % ROWS, i % COLS]);
    expect(validateClicks(path.slice(0, MAX_CLICKS))).toEqual({
      ok: true,
      clicks: path.slice(0, MAX_CLICKS),
    });
    expect(validateClicks(path)).toEqual({
      ok: false,
      problems: [{ field: 'clicks', message: 'must contain at most 500 clicks' }],
    });
  });

  it('accepts an empty path and returns copies of the clicks', () => {
    expect(validateClicks([])).toEqual({ ok: true, clicks: [] });
    const input = [[3, 4]];
    const result = validateClicks(input);
    expect(result).toEqual({ ok: true, clicks: [[3, 4]] });
    if (result.ok) expect(result.clicks[0]).not.toBe(input[0]);
  });
});

describe('generateBoard', () => {
  it('maps each random byte to a colour, 64 byte values per colour', () => {
    const counts = Array<number>(COLORS).fill(0);
    for (let byte = 0; byte < 256; byte++) {
      const board = generateBoard((n) => new Uint8Array(n).fill(byte));
      expect(board.flat()).toEqual(Array(SIZE).fill(byte % COLORS));
      counts[byte % COLORS]++;
    }
    expect(counts).toEqual([64, 64, 64, 64]);
  });

  it('lays the bytes out row by row', () => {
    const board = generateBoard((n) => Uint8Array.from({ length: n }, (_, i) => i));
    expect(board[0][3]).toBe(3);
    expect(board[1][0]).toBe(10 % COLORS);
    expect(board[9][9]).toBe(99 % COLORS);
  });

  it('produces a full 10×10 board from the system source by default', () => {
    const board = generateBoard();
    expect(board).toHaveLength(ROWS);
    for (const line of board) {
      expect(line).toHaveLength(COLS);
      for (const color of line) expect([0, 1, 2, 3]).toContain(color);
    }
    expect(() => replay(board, [])).not.toThrow();
  });

  it('refuses a random source that returns too few bytes', () => {
    expect(() => generateBoard(() => new Uint8Array(99))).toThrow(RangeError);
  });
});

describe('replay properties', () => {
  // Fewer colours make bigger groups, full clears and long cascades likely.
  const boardArb = fc
    .integer({ min: 1, max: COLORS })
    .chain((colors) =>
      fc.array(
        fc.array(fc.integer({ min: 0, max: colors - 1 }), { minLength: COLS, maxLength: COLS }),
        { minLength: ROWS, maxLength: ROWS },
      ),
    );
  const randomClicksArb = fc.array(
    fc.tuple(fc.integer({ min: 0, max: ROWS - 1 }), fc.integer({ min: 0, max: COLS - 1 })),
    { maxLength: 150 },
  );
  // Random clicks mostly miss on a thinned board; this one follows real groups to the end.
  const gameArb = fc.oneof(
    fc.tuple(boardArb, randomClicksArb),
    fc
      .tuple(boardArb, fc.array(fc.nat(), { minLength: 1, maxLength: 80 }))
      .map(([board, picks]): [Board, Click[]] => {
        let next = 0;
        return [board, playedPath(board, picks.length, (n) => picks[next++ % picks.length] % n)];
      }),
  );

  it('lists as clickable exactly the cells a plain scan of the board finds, after every click', () => {
    const sorted = (cells: Click[]) => [...cells].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    fc.assert(
      fc.property(gameArb, ([board, clicks]) => {
        const game = new SameGame(board);
        expect(sorted(game.clickable())).toEqual(clickableByScan(game.toCells()));
        for (const [row, col] of clicks) {
          game.click(row, col);
          expect(sorted(game.clickable())).toEqual(clickableByScan(game.toCells()));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('agrees with a plain reference implementation of the rules', () => {
    fc.assert(
      fc.property(gameArb, ([board, clicks]) => {
        const expected = referencePlay(board, clicks);
        const game = new SameGame(board);
        for (const [row, col] of clicks) game.click(row, col);
        expect(game.toCells()).toEqual(expected.grid);
        const remaining = tilesOf(expected.grid);
        expect(replay(board, clicks)).toEqual({
          score: expected.score,
          cleared: SIZE - remaining,
          remaining,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic and does not mutate its input', () => {
    fc.assert(
      fc.property(gameArb, ([board, clicks]) => {
        const boardCopy = structuredClone(board);
        const clicksCopy = structuredClone(clicks);
        expect(replay(board, clicks)).toEqual(replay(board, clicks));
        expect(board).toEqual(boardCopy);
        expect(clicks).toEqual(clicksCopy);
      }),
    );
  });

  it('scores each removal (n - 2)², counts every removed tile, and keeps the board settled', () => {
    fc.assert(
      fc.property(gameArb, ([board, clicks]) => {
        const game = new SameGame(board);
        let removedTotal = 0;
        let expectedScore = 0;
        for (const [row, col] of clicks) {
          const before = tilesOf(game.toCells());
          const removed = game.click(row, col);
          const after = game.toCells();
          expect(removed === 0 || removed >= 2).toBe(true);
          expect(before - tilesOf(after)).toBe(removed);
          expect(settled(after)).toBe(true);
          removedTotal += removed;
          if (removed > 0) expectedScore += (removed - 2) ** 2;
          if (removed > 0 && tilesOf(after) === 0) expectedScore += CLEAR_BONUS;
        }
        const result = replay(board, clicks);
        expect(result.score).toBeGreaterThanOrEqual(0);
        expect(result.score).toBe(expectedScore);
        expect(result.cleared).toBe(removedTotal);
        expect(result.cleared).toBe(SIZE - result.remaining);
        expect(result.remaining).toBe(tilesOf(game.toCells()));
      }),
      { numRuns: 200 },
    );
  });
});

describe('replay timing', () => {
  it(`replays a ${MAX_CLICKS}-click path in well under 5 ms`, () => {
    const random = seeded(20240611);
    const bytes = (n: number): Uint8Array =>
      Uint8Array.from({ length: n }, () => Math.floor(random() * 256));
    const pick = (n: number): number => Math.floor(random() * n);
    const games = Array.from({ length: 200 }, () => {
      const board = generateBoard(bytes);
      return { board, clicks: playedPath(board, MAX_CLICKS, pick) };
    });
    // Warm up so that the measurement is of optimised code, as on a long-running server.
    for (const { board, clicks } of games) replay(board, clicks);

    const samples = games.map(({ board, clicks }) => {
      const start = process.hrtime.bigint();
      replay(board, clicks);
      return Number(process.hrtime.bigint() - start) / 1e6;
    });
    const mean = samples.reduce((sum, ms) => sum + ms, 0) / samples.length;
    expect(mean).toBeLessThan(5);
  });
});
