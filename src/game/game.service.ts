import { Injectable } from '@nestjs/common';
import { AppError, validationFailed } from '../common/errors';
import { GameRepository, type LeaderboardRow, type RoundView } from './game.repository';
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

export interface NewRound {
  roundId: string;
  board: Board;
  colors: number;
  expiresAt: Date;
}

@Injectable()
export class GameService {
  constructor(private readonly rounds: GameRepository) {}

  /** A fresh board from a cryptographically random source; the user's open round is abandoned. */
  async start(userId: string): Promise<NewRound> {
    const started = await this.rounds.start(userId, generateBoard(), ROUND_TTL_S);
    return {
      roundId: started.id,
      board: started.board,
      colors: COLORS,
      expiresAt: started.expiresAt,
    };
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

  async leaderboard(): Promise<LeaderboardRow[]> {
    return this.rounds.leaderboard(LEADERBOARD_SIZE);
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
