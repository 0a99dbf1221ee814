import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
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

/** The owner of `game_rounds`. */
@Injectable()
export class GameRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Abandons the user's open round, if any. */
  async abandonOpen(userId: string): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE game_rounds SET status = 'abandoned', finished_at = now()
        WHERE user_id = $1 AND status = 'open'`,
      [userId],
    );
  }

  async insert(userId: string, board: Board, ttlS: number): Promise<StartedRound> {
    const rows = await sqlRows<{ id: string; expires_at: Date }>(
      this.txHost.tx,
      `INSERT INTO game_rounds (user_id, board, expires_at)
       VALUES ($1, $2::jsonb, now() + make_interval(secs => $3))
       RETURNING id, expires_at`,
      [userId, JSON.stringify(board), ttlS],
    );
    return { id: rows[0].id, board, expiresAt: rows[0].expires_at };
  }

  /** The round if it is the user's; another user's round is as good as missing. */
  async find(roundId: string, userId: string): Promise<RoundView | null> {
    const rows = await sqlRows<{ board: Board; status: RoundState; expired: boolean }>(
      this.txHost.tx,
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
      this.txHost.tx,
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
      this.txHost.tx,
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

  /**
   * Deletes up to `batch` rounds no rule needs any more, older than a day: rounds that never
   * finished, and finished rounds other than their player's best (the one the leaderboard shows:
   * highest score, then earliest). Returns how many.
   */
  async deleteSpent(batch: number): Promise<number> {
    const rows = await sqlRows(
      this.txHost.tx,
      `DELETE FROM game_rounds
        WHERE ctid = ANY(ARRAY(
                SELECT r.ctid FROM game_rounds r
                 WHERE (r.status <> 'finished' AND r.expires_at < now() - interval '1 day')
                    OR (r.status = 'finished' AND r.finished_at < now() - interval '1 day'
                        AND EXISTS (SELECT 1 FROM game_rounds b
                                     WHERE b.user_id = r.user_id AND b.status = 'finished'
                                       AND (b.score > r.score
                                            OR (b.score = r.score AND b.finished_at < r.finished_at)
                                            OR (b.score = r.score AND b.finished_at = r.finished_at
                                                AND b.id < r.id))))
                 LIMIT $1))
        RETURNING 1`,
      [batch],
    );
    return rows.length;
  }
}
