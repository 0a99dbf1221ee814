import { GameRound } from './entities/game-round.entity';

/** The entities of game/: GameModule registers them, src/entities.ts joins them for the CLI. */
export const GAME_ENTITIES = [GameRound];
