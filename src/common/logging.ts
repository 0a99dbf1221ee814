import type { LoggerService } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import pino, { type DestinationStream } from 'pino';
import type { Options } from 'pino-http';
import { type Settings } from '../config/settings';

/** Header and body paths that never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-internal-secret"]',
  'req.headers["x-telegram-bot-api-secret-token"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.seed',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.bootstrap_token',
  '*.poll_secret',
  '*.ssh_private_key',
];

/**
 * The application's logger: JSON lines, redacted, pretty-printed instead for a person at a
 * terminal in development. Lines go out through an asynchronous buffered destination instead
 * of one synchronous write each (`BUFFERED_OUTPUT`); pino writes what is still buffered
 * synchronously when the process exits (`process.exit`, as a shutdown ends), so a shutdown keeps
 * them. A process killed outright loses what it logged in its last 100 ms at most.
 *
 * Each request's own line is written by `requestLog` (request-id.ts) from this logger, so nestjs-pino
 * mounts no per-request middleware (`forRoutes: []`): pino-http's two child loggers and its async
 * context per request cost more than the line itself, and requests refused before routing need
 * the same line anyway. Service log lines therefore carry no request binding; errors log their
 * request id themselves (AllExceptionsFilter).
 */
export function loggerOptions(settings: Settings): Params {
  const transport = prettyTransport(settings);
  const options: Options = {
    transport,
    level: settings.logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // `req` and `res` of a request's line are already the plain fields `requestLog` picked;
    // pino-http's own serializers would read them as Node's request and response.
    wrapSerializers: false,
    serializers: { err: pino.stdSerializers.err, req: asIs, res: asIs },
  };
  const pinoHttp =
    transport || settings.logLevel === 'silent'
      ? options
      : ([options, pino.destination(BUFFERED_OUTPUT)] as [Options, DestinationStream]);
  return { pinoHttp, forRoutes: [] };
}

const asIs = <T>(value: T): T => value;

/**
 * Standard output, written in chunks of at least 4 KB (some twenty lines) or every 100 ms,
 * whichever comes first: each write is a system call and a round through libuv's thread pool,
 * which one line a request made a measurable share of a busy service's CPU (bench/RESULTS.md).
 * (The flush of an idle process writes an empty chunk: ten writes of nothing a second.)
 */
const BUFFERED_OUTPUT = { dest: 1, sync: false, minLength: 4096, periodicFlush: 100 } as const;

/**
 * The lines of `main.ts` written outside the HTTP application (the embedded database, migrations at
 * start, a failed start, shutdown) in the application's format. Written synchronously: a line
 * logged just before `process.exit` is never lost.
 */
export function processLogger(
  settings: Pick<Settings, 'nodeEnv' | 'logLevel'>,
  fd: 1 | 2 = 1,
): pino.Logger {
  const options = { level: settings.logLevel, redact: REDACTED_PATHS };
  const pretty = prettyTransport(settings, fd);
  if (pretty) {
    // A development dependency, loaded only where prettyTransport found it installed.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const build = require(pretty.target) as (options: object) => DestinationStream;
    return pino(options, build({ ...pretty.options, destination: fd, sync: true }));
  }
  return pino(options, pino.destination({ dest: fd, sync: true }));
}

/**
 * pino-pretty in a worker thread, when a person reads the log and the package is installed. Only in
 * development: tests (NODE_ENV=test) read the log as JSON whatever the terminal, and the worker
 * thread would write past any capture of the process's output.
 */
export function prettyTransport(
  settings: Pick<Settings, 'nodeEnv'>,
  fd: 1 | 2 = 1,
): { target: string; options: object } | undefined {
  const terminal = fd === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  if (settings.nodeEnv !== 'development' || !terminal) return undefined;
  try {
    // A development dependency: absent where the dependencies were installed with --omit=dev.
    require.resolve('pino-pretty');
  } catch {
    return undefined;
  }
  return {
    target: 'pino-pretty',
    options: {
      colorize: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,context,req,res,responseTime',
      messageFormat:
        '{if context}[{context}] {end}{msg}' +
        '{if req.method} {req.method} {req.url} {res.statusCode} {responseTime} ms{end}',
    },
  };
}

/** Nest's start-up account of its wiring: a line per module and per route, for whoever debugs it. */
const WIRING_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** The application's logger as Nest uses it, with Nest's wiring lines moved down to `debug`. */
export function quietWiring(logger: LoggerService): LoggerService {
  const wiring = (params: unknown[]): boolean => WIRING_CONTEXTS.has(params.at(-1) as string);
  return {
    log: (message: unknown, ...params: unknown[]) =>
      wiring(params) ? logger.debug?.(message, ...params) : logger.log(message, ...params),
    error: (message: unknown, ...params: unknown[]) => logger.error(message, ...params),
    warn: (message: unknown, ...params: unknown[]) => logger.warn(message, ...params),
    debug: (message: unknown, ...params: unknown[]) => logger.debug?.(message, ...params),
    verbose: (message: unknown, ...params: unknown[]) => logger.verbose?.(message, ...params),
    fatal: (message: unknown, ...params: unknown[]) => logger.fatal?.(message, ...params),
  };
}
