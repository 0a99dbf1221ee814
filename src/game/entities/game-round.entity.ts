import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';
import type { Board, Click } from '../samegame';

export const ROUND_STATES = ['open', 'finished', 'abandoned'] as const;
export type RoundState = (typeof ROUND_STATES)[number];

/**
 * One round of the board game. The server generates and keeps the board; the round is scored once,
 * before `expires_at`, by replaying the submitted clicks (kept for audit). Starting a new round
 * abandons the user's open one, so a user has at most one open round.
 */
@Entity('game_rounds')
@Check('CHK_game_rounds_status', "status IN ('open', 'finished', 'abandoned')")
@Check('CHK_game_rounds_score', "(status = 'finished') = (score IS NOT NULL)")
@Index('UQ_game_rounds_open_user', ['userId'], { unique: true, where: "status = 'open'" })
@Index('IDX_game_rounds_leaderboard', ['userId', 'score', 'finishedAt'], {
  where: "status = 'finished'",
})
export class GameRound {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  /** `board[row][col]`, 10×10 colours 0..3, as generated. */
  @Column({ type: 'jsonb' })
  board: Board;

  @Column({ type: 'text', default: 'open' })
  status: RoundState;

  @Column({ type: 'integer', nullable: true })
  score: number | null;

  @Column({ type: 'integer', nullable: true })
  cleared: number | null;

  /** The click path that was scored, as validated. */
  @Column({ type: 'jsonb', nullable: true })
  clicks: Click[] | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  /** When it was scored or abandoned. */
  @Column({ type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
