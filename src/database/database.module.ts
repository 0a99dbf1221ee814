import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import {
  ClsPluginTransactional,
  getTransactionHostToken,
  TransactionHost,
} from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { DataSource } from 'typeorm';
import { AdvisoryLocks, LOCK_DATA_SOURCE } from './advisory-lock';
import { type ConnectionOptions, dataSourceOptions, type EntityList } from './data-source';

/**
 * Connections on the direct URL: one per lock held at once (each periodic job, bot polling, the
 * wallet reader), closed again when idle.
 */
const LOCK_POOL_SIZE = 10;

/**
 * The database and the one way to say "these writes commit together": a service method marked
 * @Transactional(); repositories run every statement on TransactionHost.tx. The app and the
 * one-off commands (create-owner, seed-demo) both start from here.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(
    databaseUrl: string,
    options: ConnectionOptions & {
      migrationsRun: boolean;
      connectionName?: string;
      /** PostgreSQL itself when `databaseUrl` is a pooler; see `LOCK_DATA_SOURCE`. */
      directUrl?: string | null;
      /**
       * The entities of a context without feature modules (a one-off command); unset, those the
       * feature modules register (`TypeOrmModule.forFeature`) are loaded.
       */
      entities?: EntityList;
    },
  ): DynamicModule {
    const {
      connectionName,
      statementTimeoutMs,
      poolWaitMs,
      pooler,
      directUrl,
      entities,
      ...dataSource
    } = options;
    // Repositories inject the unnamed host; a named one stands in for it.
    const hostAlias = connectionName
      ? [{ provide: TransactionHost, useExisting: getTransactionHostToken(connectionName) }]
      : [];
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(
            databaseUrl,
            { ...dataSource, entities: entities ?? [] },
            { statementTimeoutMs, poolWaitMs, pooler },
          ),
          autoLoadEntities: entities === undefined,
        }),
        ClsModule.forRoot({
          global: true,
          plugins: [
            new ClsPluginTransactional({
              connectionName,
              imports: [TypeOrmModule],
              adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
            }),
          ],
        }),
      ],
      providers: [
        AdvisoryLocks,
        ...hostAlias,
        {
          provide: LOCK_DATA_SOURCE,
          useFactory: () =>
            directUrl
              ? new DataSource(
                  dataSourceOptions(
                    directUrl,
                    { entities: [], migrations: [] },
                    { statementTimeoutMs, poolSize: LOCK_POOL_SIZE },
                  ),
                ).initialize()
              : null,
        },
      ],
      exports: [AdvisoryLocks, ...hostAlias],
    };
  }
}
