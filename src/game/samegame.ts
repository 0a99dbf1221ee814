/**
 * The rules of the board game (SameGame), free of HTTP and database types so that the service,
 * the tests, the benchmark and the web app replay a click path with the very same code. It imports
 * nothing, so the web app's bundle takes it as it is (randomness from Web Crypto, in Node too).
 */

export const ROWS = 10;
export const COLS = 10;
export const COLORS = 4;
export const MAX_CLICKS = 500;
export const CLEAR_BONUS = 1000;

/** `board[row][col]`, row 0 at the top; always full when generated, stored or sent to clients. */
export type Board = number[][];
/** A cell of a board in play: `null` once its tile has been removed. */
export type Cell = number | null;
/** `[row, col]` on the board as it stands after all earlier clicks. */
export type Click = [number, number];

export interface ReplayResult {
  score: number;
  /** Tiles removed; `cleared + remaining` is always `ROWS * COLS`. */
  cleared: number;
  remaining: number;
}

/** Same shape as the error body's `details` entries, so the HTTP layer can pass it on as is. */
export interface ClickProblem {
  field: string;
  message: string;
}

export type ClickValidation =
  { ok: true; clicks: Click[] } | { ok: false; problems: ClickProblem[] };

const SIZE = ROWS * COLS;
const EMPTY = -1;
/** Keeps a 400 body small when a whole path is garbage; the first few problems are enough to fix it. */
const MAX_PROBLEMS = 20;

/** A full board of uniformly random colours; `random(n)` must return `n` unpredictable bytes. */
export function generateBoard(
  random: (n: number) => Uint8Array = (n) => crypto.getRandomValues(new Uint8Array(n)),
): Board {
  const bytes = random(SIZE);
  if (bytes.length < SIZE) throw new RangeError(`random source returned ${bytes.length} bytes`);
  const board: Board = [];
  for (let row = 0; row < ROWS; row++) {
    const line: number[] = [];
    // 256 % COLORS === 0, so byte % COLORS has no modulo bias: each colour gets 64 of the 256 values.
    for (let col = 0; col < COLS; col++) line.push(bytes[row * COLS + col] % COLORS);
    board.push(line);
  }
  return board;
}

function isCoordinate(value: unknown, limit: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < limit;
}

/** The click itself, or why it is not one. */
function parseClick(item: unknown): Click | string {
  if (!Array.isArray(item) || item.length !== 2) return 'must be a pair [row, col]';
  const [row, col]: unknown[] = item;
  const rowOk = isCoordinate(row, ROWS);
  const colOk = isCoordinate(col, COLS);
  if (rowOk && colOk) return [row, col];
  if (rowOk) return `col must be an integer from 0 to ${COLS - 1}`;
  if (colOk) return `row must be an integer from 0 to ${ROWS - 1}`;
  return `row and col must be integers from 0 to ${ROWS - 1}`;
}

/**
 * Checks a submitted click path of unknown shape. One bad click rejects the whole submission, as
 * the contract says; the problems name the offending entries (`clicks[3]`).
 */
export function validateClicks(value: unknown): ClickValidation {
  if (!Array.isArray(value)) {
    return {
      ok: false,
      problems: [{ field: 'clicks', message: 'must be an array of [row, col]' }],
    };
  }
  if (value.length > MAX_CLICKS) {
    return {
      ok: false,
      problems: [{ field: 'clicks', message: `must contain at most ${MAX_CLICKS} clicks` }],
    };
  }
  const items: readonly unknown[] = value;
  const clicks: Click[] = [];
  const problems: ClickProblem[] = [];
  for (let i = 0; i < items.length && problems.length < MAX_PROBLEMS; i++) {
    const click = parseClick(items[i]);
    if (typeof click === 'string') problems.push({ field: `clicks[${i}]`, message: click });
    else clicks.push(click);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, clicks };
}

/**
 * A board in play. Cells live in a flat column-major typed array (`col * ROWS + row`, -1 when
 * empty) so that gravity and closing a column are contiguous moves, and nothing is allocated per
 * click.
 */
export class SameGame {
  private readonly cells = new Int8Array(SIZE);
  /** Flood-fill stack: every cell is pushed at most once, so SIZE entries always suffice. */
  private readonly stack = new Uint8Array(SIZE);
  /** Columns 0..width-1 hold tiles; every column from width on is empty. */
  private width = COLS;
  private tiles = SIZE;
  private points = 0;

  constructor(board: Board) {
    if (!Array.isArray(board) || board.length !== ROWS) throw badBoard();
    for (let row = 0; row < ROWS; row++) {
      const line = board[row];
      if (!Array.isArray(line) || line.length !== COLS) throw badBoard();
      for (let col = 0; col < COLS; col++) {
        const color = line[col];
        if (!isCoordinate(color, COLORS)) throw badBoard();
        this.cells[col * ROWS + row] = color;
      }
    }
  }

  get score(): number {
    return this.points;
  }

  get remaining(): number {
    return this.tiles;
  }

  /** Plays one click and returns how many tiles it removed: 0 when it does nothing. */
  click(row: number, col: number): number {
    if (!isCoordinate(row, ROWS) || !isCoordinate(col, COLS)) {
      throw new RangeError(`click [${row}, ${col}] is off the board`);
    }
    const cells = this.cells;
    const start = col * ROWS + row;
    const color = cells[start];
    if (color === EMPTY) return 0;
    // Cheap test first: most clicks of a long path land on lonely tiles once the board thins out.
    const grouped =
      (row > 0 && cells[start - 1] === color) ||
      (row < ROWS - 1 && cells[start + 1] === color) ||
      (col > 0 && cells[start - ROWS] === color) ||
      (col < COLS - 1 && cells[start + ROWS] === color);
    if (!grouped) return 0;

    // Cells are emptied as they are pushed, which doubles as the visited mark.
    const stack = this.stack;
    let top = 0;
    let removed = 0;
    let minCol = col;
    let maxCol = col;
    cells[start] = EMPTY;
    stack[top++] = start;
    while (top > 0) {
      const i = stack[--top];
      removed++;
      const r = i % ROWS;
      const c = (i - r) / ROWS;
      if (c < minCol) minCol = c;
      if (c > maxCol) maxCol = c;
      if (r > 0 && cells[i - 1] === color) {
        cells[i - 1] = EMPTY;
        stack[top++] = i - 1;
      }
      if (r < ROWS - 1 && cells[i + 1] === color) {
        cells[i + 1] = EMPTY;
        stack[top++] = i + 1;
      }
      if (c > 0 && cells[i - ROWS] === color) {
        cells[i - ROWS] = EMPTY;
        stack[top++] = i - ROWS;
      }
      if (c < COLS - 1 && cells[i + ROWS] === color) {
        cells[i + ROWS] = EMPTY;
        stack[top++] = i + ROWS;
      }
    }

    // Gravity: only the columns the group touched can have holes.
    for (let c = minCol; c <= maxCol; c++) {
      const base = c * ROWS;
      let write = base + ROWS - 1;
      for (let read = write; read >= base; read--) {
        const tile = cells[read];
        if (tile === EMPTY) continue;
        if (read !== write) {
          cells[write] = tile;
          cells[read] = EMPTY;
        }
        write--;
      }
    }

    // Close emptied columns (bottom cell empty after gravity), shifting the ones right of them left.
    let write = minCol;
    for (let c = minCol; c < this.width; c++) {
      if (cells[c * ROWS + ROWS - 1] === EMPTY) continue;
      if (c !== write) cells.copyWithin(write * ROWS, c * ROWS, c * ROWS + ROWS);
      write++;
    }
    cells.fill(EMPTY, write * ROWS, this.width * ROWS);
    this.width = write;

    this.tiles -= removed;
    this.points += (removed - 2) * (removed - 2);
    if (this.tiles === 0) this.points += CLEAR_BONUS;
    return removed;
  }

  result(): ReplayResult {
    return { score: this.points, cleared: SIZE - this.tiles, remaining: this.tiles };
  }

  /** The cells a click would clear: tiles with an orthogonal neighbour of their own colour. */
  clickable(): Click[] {
    const cells = this.cells;
    const out: Click[] = [];
    for (let col = 0; col < this.width; col++) {
      for (let row = 0; row < ROWS; row++) {
        const tile = cells[col * ROWS + row];
        if (tile === EMPTY) continue;
        const same =
          (row > 0 && cells[col * ROWS + row - 1] === tile) ||
          (row < ROWS - 1 && cells[col * ROWS + row + 1] === tile) ||
          (col > 0 && cells[(col - 1) * ROWS + row] === tile) ||
          (col < COLS - 1 && cells[(col + 1) * ROWS + row] === tile);
        if (same) out.push([row, col]);
      }
    }
    return out;
  }

  /** The board as it stands, `board[row][col]`, with `null` for removed tiles. */
  toCells(): Cell[][] {
    const out: Cell[][] = [];
    for (let row = 0; row < ROWS; row++) {
      const line: Cell[] = [];
      for (let col = 0; col < COLS; col++) {
        const tile = this.cells[col * ROWS + row];
        line.push(tile === EMPTY ? null : tile);
      }
      out.push(line);
    }
    return out;
  }
}

function badBoard(): RangeError {
  return new RangeError(`board must be ${ROWS}×${COLS} integers from 0 to ${COLORS - 1}`);
}

/**
 * Scores a click path on a full board without touching either argument. Clicks are expected to
 * have passed `validateClicks`; an off-board click throws rather than being read out of bounds.
 */
export function replay(board: Board, clicks: readonly Click[]): ReplayResult {
  const game = new SameGame(board);
  for (let i = 0; i < clicks.length; i++) game.click(clicks[i][0], clicks[i][1]);
  return game.result();
}
