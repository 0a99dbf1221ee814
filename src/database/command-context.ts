import { type INestApplicationContext, Module, type Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { type EntityList } from './data-source';
import { DatabaseModule } from './database.module';

@Module({})
class CommandModule {}

/**
 * The database, the transaction host and `providers`, for a one-off command (create-owner,
 * seed-demo): the same repositories as the app; a command groups writes with
 * `TransactionHost.withTransaction`. No feature module registers entities here: the command
 * passes every one (src/entities.ts), as the app loads them.
 */
export function startCommandContext(
  settings: Settings,
  databaseUrl: string,
  entities: EntityList,
  providers: Provider[],
): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(
    {
      module: CommandModule,
      imports: [
        DatabaseModule.forRoot(databaseUrl, {
          migrationsRun: settings.migrationsRun,
          pooler: settings.dbPooler,
          directUrl: settings.databaseDirectUrl,
          entities,
          // @Transactional() finds its host per process by connection name: a command run in a
          // process that also hosts the app (the tests) must not take the app's place.
          connectionName: 'command',
        }),
      ],
      // The settings too, as the app provides them: repositories read their defaults there.
      providers: [{ provide: SETTINGS, useValue: settings }, ...providers],
    },
    { logger: false },
  );
}
