import { Injectable } from '@nestjs/common';
import { AppError, validationFailed } from '../common/errors';
import { CachedRead } from '../common/concurrency/cached-read';
import { Transactional } from '@nestjs-cls/transactional';
import { AdvisoryLocks } from '../database/advisory-lock';
import {
  GameRepository,
  type LeaderboardRow,
  type RoundView,
  type StartedRound,
} from './game.repository';
import {
  COLORS,
  generateBoard,
  replay,
  type Board,
  type ReplayResult,
  validateClicks,
} from './samegame';

/** A round must be scored within this time of its start. */
export const ROUND_TTL_S = 15 * 60;
export const LEADERBOARD_SIZE = 20;
/** The public leaderboard may lag this much: anonymous requests then cost one query per period. */
export const LEADERBOARD_CACHE_MS = 5_000;

export interface NewRound {
  roundId: string;
  board: Board;
  colors: number;
  expiresAt: Date;
}

@Injectable()
export class GameService {
  private readonly board = new CachedRead(
    () => this.rounds.leaderboard(LEADERBOARD_SIZE),
    LEADERBOARD_CACHE_MS,
  );

  constructor(
    private readonly rounds: GameRepository,
    private readonly locks: AdvisoryLocks,
  ) {}

  /** A fresh board from a cryptographically random source; the user's open round is abandoned. */
  async start(userId: string): Promise<NewRound> {
    const started = await this.replaceOpenRound(userId, generateBoard());
    return {
      roundId: started.id,
      board: started.board,
      colors: COLORS,
      expiresAt: started.expiresAt,
    };
  }

  /**
   * Abandons the user's open round and stores the new one, together. A per-user lock serialises
   * concurrent starts, so the partial unique index on open rounds is never hit by a race.
   */
  @Transactional()
  private async replaceOpenRound(userId: string, board: Board): Promise<StartedRound> {
    await this.locks.lock(`game_rounds:${userId}`);
    await this.rounds.abandonOpen(userId);
    return this.rounds.insert(userId, board, ROUND_TTL_S);
  }

  /**
   * Replays the raw click path on the stored board and records the result once. Malformed clicks
   * reject the whole submission and leave the round open.
   */
  async score(userId: string, roundId: string, rawClicks: unknown): Promise<ReplayResult> {
    const checked = validateClicks(rawClicks);
    if (!checked.ok) throw validationFailed(checked.problems);

    const round = await this.rounds.find(roundId, userId);
    this.assertOpen(round);
    const result = replay(round.board, checked.clicks);
    if (await this.rounds.finish(roundId, userId, checked.clicks, result)) return result;

    // Lost a race with another submission, or expired in between: say which.
    this.assertOpen(await this.rounds.find(roundId, userId));
    throw new AppError('ROUND_FINISHED', 'this round has already been scored');
  }

  leaderboard(): Promise<LeaderboardRow[]> {
    return this.board.get();
  }

  private assertOpen(round: RoundView | null): asserts round is RoundView {
    if (!round) throw new AppError('NOT_FOUND', 'round not found');
    switch (round.status) {
      case 'open':
        if (round.expired) throw new AppError('ROUND_EXPIRED', 'this round has expired');
        return;
      case 'finished':
        throw new AppError('ROUND_FINISHED', 'this round has already been scored');
      case 'abandoned':
        throw new AppError('ROUND_FINISHED', 'this round was abandoned for a newer one');
    }
  }
}
