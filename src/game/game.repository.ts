import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { sqlRows } from '../database/sql';
import type { RoundState } from './entities/game-round.entity';
import type { Board, Click, ReplayResult } from './samegame';

export interface StartedRound {
  id: string;
  board: Board;
  expiresAt: Date;
}

export interface RoundView {
  board: Board;
  status: RoundState;
  /** Measured by the database clock, the same one the conditional update uses. */
  expired: boolean;
}

export interface LeaderboardRow {
  userId: string;
  bestScore: number;
}

/** Every query on game rounds. */
@Injectable()
export class GameRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Abandons the user's open round, if any, and stores the new one, in one transaction. A per-user
   * advisory lock serialises concurrent starts, so the partial unique index on open rounds is never
   * hit by a race.
   */
  async start(userId: string, board: Board, ttlS: number): Promise<StartedRound> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(
        `SELECT pg_advisory_xact_lock(hashtext('game_rounds'), hashtext($1::text))`,
        [userId],
      );
      await manager.query(
        `UPDATE game_rounds SET status = 'abandoned', finished_at = now()
          WHERE user_id = $1 AND status = 'open'`,
        [userId],
      );
      const rows = await sqlRows<{ id: string; expires_at: Date }>(
        manager,
        `INSERT INTO game_rounds (user_id, board, expires_at)
         VALUES ($1, $2::jsonb, now() + make_interval(secs => $3))
         RETURNING id, expires_at`,
        [userId, JSON.stringify(board), ttlS],
      );
      return { id: rows[0].id, board, expiresAt: rows[0].expires_at };
    });
  }

  /** The round if it is the user's; another user's round is as good as missing. */
  async find(roundId: string, userId: string): Promise<RoundView | null> {
    const rows = await sqlRows<{ board: Board; status: RoundState; expired: boolean }>(
      this.dataSource,
      `SELECT board, status, expires_at <= now() AS expired
         FROM game_rounds WHERE id = $1 AND user_id = $2`,
      [roundId, userId],
    );
    return rows[0] ?? null;
  }

  /**
   * Records the score only while the round is open and not expired; of any number of concurrent
   * submissions exactly one gets `true`.
   */
  async finish(
    roundId: string,
    userId: string,
    clicks: readonly Click[],
    result: ReplayResult,
  ): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `UPDATE game_rounds
          SET status = 'finished', score = $3, cleared = $4, clicks = $5::jsonb, finished_at = now()
        WHERE id = $1 AND user_id = $2 AND status = 'open' AND expires_at > now()
        RETURNING id`,
      [roundId, userId, result.score, result.cleared, JSON.stringify(clicks)],
    );
    return rows.length === 1;
  }

  /** Best score per user; equal scores rank by who reached theirs first. */
  async leaderboard(limit: number): Promise<LeaderboardRow[]> {
    const rows = await sqlRows<{ user_id: string; best_score: number }>(
      this.dataSource,
      `SELECT user_id, score AS best_score
         FROM (SELECT DISTINCT ON (user_id) user_id, score, finished_at
                 FROM game_rounds
                WHERE status = 'finished'
                ORDER BY user_id, score DESC, finished_at ASC) best
        ORDER BY score DESC, finished_at ASC, user_id ASC
        LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({ userId: row.user_id, bestScore: row.best_score }));
  }
}
