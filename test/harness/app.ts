import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory';
import { loadSettings, type Settings } from '../../src/config/settings';
import { createTestDatabase, type TestDatabase } from './database';

export const TEST_SECRETS = {
  JWT_ACCESS_SECRET: 'test-jwt-access-secret-0123456789abcdef',
  INTERNAL_SECRET: 'test-internal-secret-0123456789abcdefgh',
  PROXY_TOKEN_SECRET: 'test-proxy-token-secret-0123456789abcde',
  DATA_ENCRYPTION_KEY: 'test-data-encryption-key-0123456789abcd',
  SEED_PEPPER: 'test-seed-pepper-0123456789abcdefghijklm',
};

export const TRUSTED_ORIGIN = 'https://app.example.test';

/**
 * Every test client comes from one address: the throttles on routes that make rows are lifted
 * unless a test sets them (test/rate-limits.e2e-spec.ts does).
 */
const UNTHROTTLED = Object.fromEntries(
  [
    'RATE_SIGNUP_PER_ADDRESS',
    'RATE_SIGNUP_GLOBAL',
    'RATE_STAFF_LOGIN_UNKNOWN_GLOBAL',
    'RATE_SEED_LOGIN_PER_ADDRESS',
    'RATE_SEED_LOGIN_PER_SEED',
    'RATE_GAME_ROUNDS_PER_ACCOUNT',
    'RATE_GAME_ROUNDS_PER_ADDRESS',
    'RATE_TICKET_MESSAGES_PER_ACCOUNT',
    'RATE_TICKET_MESSAGES_PER_ADDRESS',
    'RATE_TICKET_MESSAGES_PER_TICKET',
    // Every test client orders from 127.0.0.1; the invoice throttle has tests of its own.
    'RATE_INVOICES_PER_ACCOUNT',
    'RATE_INVOICES_PER_ADDRESS',
  ].map((name) => [name, '999999/60']),
);

export interface TestApp {
  app: NestExpressApplication;
  settings: Settings;
  dataSource: DataSource;
  /** Base URL of the listening server, e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  database: TestDatabase;
  databaseUrl: string;
  http(): request.Agent;
  close(): Promise<void>;
}

/**
 * Boots the real application on a database of its own, listening on a loopback port.
 * `env` overrides the test defaults, exactly as environment variables would; scheduled jobs are off
 * unless `options.schedule` (tests run them by hand). `options.database` (or its URL,
 * `options.databaseUrl`) starts a second instance on another app's database (that app drops it).
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { schedule?: boolean; database?: TestDatabase; databaseUrl?: string } = {},
): Promise<TestApp> {
  const shared = options.database ?? (options.databaseUrl ? { url: options.databaseUrl } : null);
  const database: TestDatabase = shared
    ? { url: shared.url, drop: () => Promise.resolve() }
    : await createTestDatabase();
  const settings = loadSettings({
    NODE_ENV: 'test',
    DATA_DIR: '/nonexistent-test-data-dir',
    CSRF_TRUSTED_ORIGINS: TRUSTED_ORIGIN,
    CORS_ORIGINS: TRUSTED_ORIGIN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // The database the app is given below; production settings refuse to start without one.
    DATABASE_URL: database.url,
    MIGRATIONS_RUN: 'true',
    // Test nodes are local servers on 127.0.0.1; test/nodes.e2e-spec.ts checks the refusal.
    NODE_PRIVATE_HOSTS_ALLOWED: 'true',
    ...UNTHROTTLED,
    ...TEST_SECRETS,
    ...env,
  });
  const app = await createApp({
    settings,
    databaseUrl: database.url,
    schedule: options.schedule ?? false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    settings,
    dataSource: app.get(DataSource),
    baseUrl: `http://127.0.0.1:${port}`,
    databaseUrl: database.url,
    http: () => request.agent(app.getHttpServer()),
    database,
    async close() {
      await app.close();
      await database.drop();
    },
  };
}
