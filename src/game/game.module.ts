import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { GameController } from './game.controller';
import { GameCleanupJob } from './game.jobs';
import { GameRepository } from './game.repository';
import { GameService } from './game.service';
import { GAME_ENTITIES } from './game.entities';

@Module({
  imports: [TypeOrmModule.forFeature(GAME_ENTITIES), ThrottlingModule],
  controllers: [GameController],
  providers: [GameRepository, GameService, GameCleanupJob],
})
export class GameModule {}
