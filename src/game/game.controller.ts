import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { Public } from '../common/public.decorator';
import { RateLimited } from '../common/throttling/rate-limit.guard';
import { UuidPipe } from '../common/validation';
import { ScoreRequest } from './dto/game.dto';
import {
  LeaderboardEntry,
  RoundStartedResponse,
  ScoreResponse,
  toLeaderboardEntry,
  toRoundStartedResponse,
} from './dto/game.response';
import { GameService } from './game.service';
import { Answers } from '../common/openapi/answers';

@ApiTags('game')
@Controller('game')
export class GameController {
  constructor(private readonly game: GameService) {}

  @Post('rounds')
  @RateLimited(
    { name: 'game-rounds', limit: 'gameRoundsPerAccount', by: 'account' },
    { name: 'game-rounds', limit: 'gameRoundsPerAddress', by: 'address' },
  )
  @ApiCreatedResponse({ type: RoundStartedResponse })
  async start(@CurrentUser() caller: AuthUser): Promise<RoundStartedResponse> {
    return toRoundStartedResponse(await this.game.start(caller.id));
  }

  @Answers('NOT_FOUND', 'ROUND_FINISHED', 'ROUND_EXPIRED')
  @Post('rounds/:id/score')
  @HttpCode(200)
  @ApiOkResponse({ type: ScoreResponse })
  score(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: ScoreRequest,
  ): Promise<ScoreResponse> {
    return this.game.score(caller.id, id, body.clicks);
  }

  @Public()
  @Get('leaderboard')
  @ApiOkResponse({ type: LeaderboardEntry, isArray: true })
  async leaderboard(): Promise<LeaderboardEntry[]> {
    return (await this.game.leaderboard()).map(toLeaderboardEntry);
  }
}
