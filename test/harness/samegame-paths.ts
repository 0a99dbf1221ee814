import { type Board, type Click, COLS, ROWS, SameGame } from '../../src/game/samegame';

/**
 * A click path like a player's: it clears real groups while any is left (which one by `pick`),
 * then clicks at random, mostly on empty cells. Used by the engine's tests and by bench:game.
 */
export function playedPath(board: Board, length: number, pick: (n: number) => number): Click[] {
  const game = new SameGame(board);
  const clicks: Click[] = [];
  while (clicks.length < length) {
    const options = game.clickable();
    const click: Click =
      options.length > 0 ? options[pick(options.length)] : [pick(ROWS), pick(COLS)];
    game.click(click[0], click[1]);
    clicks.push(click);
  }
  return clicks;
}
