import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user';
import { CurrentUser } from '../common/auth/current-user.decorator';
import { Public } from '../common/public.decorator';
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

@ApiTags('game')
@Controller('game')
export class GameController {
  constructor(private readonly game: GameService) {}

  @Post('rounds')
  @ApiCookieAuth()
  @ApiCreatedResponse({ type: RoundStartedResponse })
  async start(@CurrentUser() caller: AuthUser): Promise<RoundStartedResponse> {
    return toRoundStartedResponse(await this.game.start(caller.id));
  }

  @Post('rounds/:id/score')
  @HttpCode(200)
  @ApiCookieAuth()
  @ApiParam({ name: 'id', format: 'uuid' })
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
