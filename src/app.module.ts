import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import { loggerOptions } from './common/logging';
import { type Settings } from './config/settings';
import { SettingsModule } from './config/settings.module';
import { DatabaseModule } from './database/database.module';
import { SystemModule } from './system/system.module';
import { AuthModule } from './auth/auth.module';
import { UsersModule } from './users/users.module';
import { SettingsStoreModule } from './settings-store/settings-store.module';
import { AdminModule } from './admin/admin.module';
import { TicketsModule } from './tickets/tickets.module';
import { GameModule } from './game/game.module';
import { BillingModule } from './billing/billing.module';
import { PartnersModule } from './partners/partners.module';
import { NodesModule } from './nodes/nodes.module';
import { DevicesModule } from './devices/devices.module';
import { InternalModule } from './internal/internal.module';
import { BotModule } from './bot/bot.module';
import { MetricsModule } from './metrics/metrics.module';
import { SchedulerModule } from './scheduler/scheduler.module';

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
        DatabaseModule.forRoot(databaseUrl, {
          migrationsRun: settings.migrationsRun,
          statementTimeoutMs: settings.dbStatementTimeoutMs,
          poolWaitMs: settings.dbPoolWaitMs,
          pooler: settings.dbPooler,
          directUrl: settings.databaseDirectUrl,
        }),
        ...(schedule ? [ScheduleModule.forRoot()] : []),
        MetricsModule,
        SchedulerModule,
        SettingsStoreModule,
        SystemModule,
        UsersModule,
        AuthModule,
        AdminModule,
        TicketsModule,
        GameModule,
        BillingModule,
        PartnersModule,
        NodesModule,
        DevicesModule,
        InternalModule,
        BotModule,
      ],
    };
  }
}
