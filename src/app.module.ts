import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import { loggerOptions } from './common/logging';
import { type Settings } from './config/settings';
import { SettingsModule } from './config/settings.module';
import { dataSourceOptions } from './database/data-source';
import { SystemModule } from './system/system.module';
import { AuthModule } from './auth/auth.module';
import { UsersModule } from './users/users.module';
import { SettingsStoreModule } from './settings-store/settings-store.module';
import { AdminModule } from './admin/admin.module';
import { TicketsModule } from './tickets/tickets.module';
import { GameModule } from './game/game.module';
import { BillingModule } from './billing/billing.module';

export interface AppModuleOptions {
  settings: Settings;
  /** The database actually used: `DATABASE_URL`, or the embedded server's. */
  databaseUrl: string;
  /** Scheduled jobs (health checks, reconciliation); tests start them by hand. */
  schedule: boolean;
}

/** Wires the feature modules, nothing else. */
@Module({})
export class AppModule {
  static forRoot({ settings, databaseUrl, schedule }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        SettingsModule.forRoot(settings),
        LoggerModule.forRoot(loggerOptions(settings)),
        TypeOrmModule.forRoot(
          dataSourceOptions(databaseUrl, { migrationsRun: settings.migrationsRun }),
        ),
        ...(schedule ? [ScheduleModule.forRoot()] : []),
        SettingsStoreModule,
        SystemModule,
        UsersModule,
        AuthModule,
        AdminModule,
        TicketsModule,
        GameModule,
        BillingModule,
      ],
    };
  }
}
