import { Module } from '@nestjs/common';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { GameController } from './game.controller';
import { GameCleanupJob } from './game.jobs';
import { GameRepository } from './game.repository';
import { GameService } from './game.service';

@Module({
  imports: [ThrottlingModule],
  controllers: [GameController],
  providers: [GameRepository, GameService, GameCleanupJob],
})
export class GameModule {}
