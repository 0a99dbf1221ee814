import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import {
  ClsPluginTransactional,
  getTransactionHostToken,
  TransactionHost,
} from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { AdvisoryLocks } from './advisory-lock';
import { dataSourceOptions } from './data-source';

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
    options: {
      migrationsRun: boolean;
      connectionName?: string;
      statementTimeoutMs?: number;
      poolWaitMs?: number;
    },
  ): DynamicModule {
    const { connectionName, statementTimeoutMs, poolWaitMs, ...dataSource } = options;
    // Repositories inject the unnamed host; a named one stands in for it.
    const hostAlias = connectionName
      ? [{ provide: TransactionHost, useExisting: getTransactionHostToken(connectionName) }]
      : [];
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot(
          dataSourceOptions(databaseUrl, dataSource, { statementTimeoutMs, poolWaitMs }),
        ),
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
      providers: [AdvisoryLocks, ...hostAlias],
      exports: [AdvisoryLocks, ...hostAlias],
    };
  }
}
