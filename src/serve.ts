import { Logger } from '@nestjs/common';
import type { Logger as PinoLogger } from 'pino';
import type { Server } from 'node:http';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { API_PREFIX, createApp } from './app.factory';
import { runCreateOwner, runResetPassword } from './auth/create-owner.command';
import { startDemoTon, type DemoTon } from './billing/demo/demo-ton';
import { runSeedDemo } from './billing/seed-demo.command';
import { processLogger } from './common/logging';
import { runResealSecrets } from './nodes/reseal-secrets.command';
import { loadSettings, type Settings, SettingsError } from './config/settings';
import { startEmbeddedPostgres } from './database/embedded-postgres';
import { runMigrationsLocked } from './database/migrate';
import { waitForDatabase } from './database/wait-for-database';
import { MetricsServer } from './metrics/metrics-server';
import { type CommandFlag, parseCommandLine } from './system/command-line';
import { gracefulClose } from './system/shutdown';

const COMMAND_RUNNERS: Record<
  CommandFlag,
  (settings: Settings, databaseUrl: string) => Promise<number>
> = {
  '--create-owner': runCreateOwner,
  '--reset-password': runResetPassword,
  '--seed-demo': runSeedDemo,
  '--reseal-secrets': runResealSecrets,
};

async function main(): Promise<void> {
  const settings = loadSettingsOrExit();
  const log = processLogger(settings);
  boundHeapGrowth(settings);
  let database: OpenDatabase | undefined;
  let app: Awaited<ReturnType<typeof createApp>> | undefined;

  // The first SIGTERM or SIGINT drains and stops (see gracefulClose); a second one, such as a
  // second Ctrl-C, stops at once, cutting whatever is in flight.
  let signals = 0;
  const shutdown = async (signal: string): Promise<void> => {
    if (++signals > 1) {
      log.warn({ context: 'Main' }, `${signal} received again, stopping now`);
      process.exit(1);
    }
    log.info(
      { context: 'Main' },
      `${signal} received, shutting down: draining for ${settings.shutdownDrainS} s, done within ` +
        `${settings.shutdownGraceS} s (send it again to stop at once)`,
    );
    let closed = true;
    if (app) {
      closed = await gracefulClose(app, {
        drainMs: settings.shutdownDrainS * 1000,
        graceMs: settings.shutdownGraceS * 1000,
      }).catch(() => false);
    }
    await database?.stop().catch(() => undefined);
    process.exit(closed ? 0 : 1);
  };
  process.on('SIGINT', (signal) => void shutdown(signal));
  process.on('SIGTERM', (signal) => void shutdown(signal));

  const commandLine = parseCommandLine(process.argv.slice(2));
  const command = commandLine.kind === 'command' ? COMMAND_RUNNERS[commandLine.flag] : null;
  try {
    // A command run beside the service shares its embedded database instead of starting another.
    database = await openDatabase(settings, log, command !== null);
    await waitForDatabases(settings, database, log);
    if (settings.migrationsRun) {
      // Behind a pooler, on PostgreSQL itself: the migration lock is held for the whole session.
      const applied = await runMigrationsLocked(settings.databaseDirectUrl ?? database.url);
      if (applied.length > 0) {
        log.info({ context: 'Migrations' }, `applied ${applied.join(', ')}`);
      }
    }
    // Applied above under the lock: nothing after this point migrates again.
    const ready: Settings = { ...settings, migrationsRun: false };
    if (command) {
      const code = await command(ready, database.url);
      await database.stop();
      process.exit(code);
    }
    const demo = ready.demoPayments ? await startDemo(ready, database.url, log) : null;
    app = await createApp({
      settings: demo?.settings ?? ready,
      databaseUrl: database.url,
      schedule: true,
    });
    await app.listen(settings.port, settings.host);
    await app.get(MetricsServer).start();
    logBanner(settings, app.getHttpServer() as Server, database.description);
  } catch (error) {
    // On stderr and whatever LOG_LEVEL says: a failed start is always told.
    processLogger({ ...settings, logLevel: 'fatal' }, 2).fatal(
      { context: 'Main' },
      `start-up failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    await app?.close().catch(() => undefined);
    await database?.stop().catch(() => undefined);
    process.exit(1);
  }
}

/**
 * Left to itself, V8 lets garbage that outlived a few young collections (every request that waits,
 * on a password hash or the database, leaves some) pile up in the old generation for a long time:
 * a minute of failed sign-ins took the heap from 60 to 130 MB and the process to 245 MB resident.
 * A full collection once the old generation is HEAP_GROWING_PERCENT past what the last one kept
 * bounds that. The bound costs CPU under steady load, since every full collection marks the whole
 * heap: at 20%, GET /nodes/routing spent about 580 µs a request, at 100% (the default) 426, with
 * V8's own policy 391; `bench:memory` peaked at 190, 235 and about 285 MB (bench/RESULTS.md). The
 * flag is read at every full collection, so setting it here, before the application allocates,
 * takes effect; NODE_OPTIONS does not accept it.
 */
function boundHeapGrowth(settings: Settings): void {
  if (settings.heapGrowingPercent > 0) {
    setFlagsFromString(`--heap-growing-percent=${settings.heapGrowingPercent}`);
  }
}

function loadSettingsOrExit(): Settings {
  try {
    return loadSettings();
  } catch (error) {
    if (error instanceof SettingsError) {
      if (process.stderr.isTTY) {
        // A person at a terminal reads a list: one line per problem.
        process.stderr.write(`${error.message}\n`);
      } else {
        // A log collector reads JSON lines whatever NODE_ENV says (the settings are what failed),
        // the problems each an item.
        processLogger({ nodeEnv: 'production', logLevel: 'fatal' }, 2).fatal(
          { context: 'Settings', problems: error.problems },
          error.message,
        );
      }
      process.exit(1);
    }
    throw error;
  }
}

interface OpenDatabase {
  url: string;
  /** For the banner: which database this is, without its password. */
  description: string;
  stop(): Promise<void>;
}

async function openDatabase(
  settings: Settings,
  log: PinoLogger,
  attach: boolean,
): Promise<OpenDatabase> {
  if (settings.databaseUrl) {
    return {
      url: settings.databaseUrl,
      description: withoutPassword(settings.databaseUrl),
      stop: async () => {},
    };
  }
  const dir = join(settings.dataDir, 'postgres');
  const embedded = await startEmbeddedPostgres({ dir, persistent: true, attach });
  // As root the cluster itself may live elsewhere (docs/operations.md); both are named then.
  const files =
    embedded.clusterDir === join(dir, 'cluster')
      ? dir
      : `${dir} (cluster in ${embedded.clusterDir})`;
  // Its Unix socket costs less per statement than loopback TCP; there is none when the cluster's
  // folder is too long a path for one.
  const reached = embedded.socketUrl ? 'over its Unix socket' : 'over TCP on 127.0.0.1';
  log.warn(
    { context: 'Database' },
    `DATABASE_URL is unset: using an embedded PostgreSQL ${reached}, files in ${files} ` +
      '(development only)',
  );
  return {
    url: embedded.socketUrl ?? embedded.url,
    description: `embedded PostgreSQL ${reached}, files in ${files}`,
    stop: () => embedded.stop(),
  };
}

/**
 * DEMO_PAYMENTS=true: the fake TON rates and chain (stopped with the process), and the demo plans
 * (as `npm run seed:demo`), so a purchase can be tried from a clean start.
 */
async function startDemo(
  settings: Settings,
  databaseUrl: string,
  log: PinoLogger,
): Promise<DemoTon> {
  const demo = await startDemoTon(settings);
  await runSeedDemo(settings, databaseUrl);
  log.warn(
    { context: 'Demo' },
    `DEMO_PAYMENTS=true: TON rates from ${demo.settings.tonRatesUrl} and the chain at ` +
      `${demo.settings.tonApiUrl} are local fakes; POST /api/v1/demo/invoices/{id}/simulate-payment pays a TON invoice ` +
      '(development only)',
  );
  return demo;
}

function withoutPassword(url: string): string {
  const shown = new URL(url);
  shown.password = '';
  return shown.toString();
}

/**
 * Waits, within DB_STARTUP_WAIT_S and saying why, for the database the pool uses and for the direct
 * one the locks use, each opened as its pool opens it.
 */
async function waitForDatabases(
  settings: Settings,
  database: OpenDatabase,
  log: PinoLogger,
): Promise<void> {
  const statementTimeoutMs = settings.dbStatementTimeoutMs;
  // Before Nest has its logger: a plain Nest Logger would print coloured text, not the log's JSON.
  const waitLog = {
    info: (message: string) => log.info({ context: 'Database' }, message),
    warn: (message: string) => log.warn({ context: 'Database' }, message),
  };
  await waitForDatabase(
    database.url,
    `database ${database.description}`,
    { statementTimeoutMs, pooler: settings.dbPooler },
    settings.dbStartupWaitS,
    waitLog,
  );
  if (settings.databaseDirectUrl) {
    await waitForDatabase(
      settings.databaseDirectUrl,
      `direct database ${withoutPassword(settings.databaseDirectUrl)}`,
      { statementTimeoutMs },
      settings.dbStartupWaitS,
      waitLog,
    );
  }
}

/**
 * What a person starting the service needs first: where it is, the web app and its console, its
 * docs, its database. In production the addresses are the public ones (PUBLIC_API_URL), which is
 * where a browser reaches the service behind its proxy; elsewhere the local one.
 */
function logBanner(settings: Settings, server: Server, database: string): void {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  const anyHost = ['0.0.0.0', '::', ''].includes(settings.host);
  const local = `http://${anyHost ? 'localhost' : settings.host}:${port}`;
  const origin = settings.nodeEnv === 'production' ? settings.publicApiUrl : local;
  const base = `${origin}/${API_PREFIX}`;
  const logger = new Logger('Main');
  logger.log(`listening on ${local}/${API_PREFIX} (${settings.host}:${port})`);
  const webBuilt = existsSync(join(settings.webDir, 'index.html'));
  if (webBuilt) {
    logger.log(`web app at ${origin}/, staff console at ${origin}/staff`);
  }
  if (settings.docsEnabled) {
    logger.log(`OpenAPI UI at ${base}/docs, document at ${base}/docs-json`);
  }
  logger.log(`database: ${database}`);
  logger.log(
    'first owner: npm run create-owner (node dist/main.js --create-owner), then sign in at ' +
      (webBuilt ? `${origin}/staff` : `POST ${base}/auth/admin/login`),
  );
}

void main();
