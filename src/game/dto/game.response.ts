import { ApiProperty } from '@nestjs/swagger';
import type { NewRound } from '../game.service';
import type { LeaderboardRow } from '../game.repository';
import { COLORS } from '../samegame';

export class RoundStartedResponse {
  @ApiProperty({ format: 'uuid' })
  round_id: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'array', items: { type: 'integer', minimum: 0, maximum: COLORS - 1 } },
    description: '10 rows of 10 colours, row 0 at the top',
  })
  board: number[][];

  @ApiProperty({ type: 'integer', example: COLORS })
  colors: number;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

export class ScoreResponse {
  @ApiProperty({ type: 'integer', example: 42 })
  score: number;

  @ApiProperty({ type: 'integer', description: 'tiles removed', example: 60 })
  cleared: number;

  @ApiProperty({ type: 'integer', description: 'tiles left on the board', example: 40 })
  remaining: number;
}

export class LeaderboardEntry {
  @ApiProperty({ format: 'uuid' })
  user_id: string;

  @ApiProperty({ type: 'integer' })
  best_score: number;
}

export function toRoundStartedResponse(round: NewRound): RoundStartedResponse {
  return {
    round_id: round.roundId,
    board: round.board,
    colors: round.colors,
    expires_at: round.expiresAt.toISOString(),
  };
}

export function toLeaderboardEntry(row: LeaderboardRow): LeaderboardEntry {
  return { user_id: row.userId, best_score: row.bestScore };
}
