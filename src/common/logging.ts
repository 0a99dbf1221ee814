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
 * terminal outside production. Lines go out through an asynchronous buffered destination instead
 * of one synchronous write each; pino flushes that buffer synchronously when the process exits, so
 * a shutdown keeps them.
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
      : ([options, pino.destination({ dest: 1, sync: false })] as [Options, DestinationStream]);
  return { pinoHttp, forRoutes: [] };
}

const asIs = <T>(value: T): T => value;

/** pino-pretty in a worker thread, when a person reads the log and the package is installed. */
function prettyTransport(settings: Settings): { target: string; options: object } | undefined {
  if (settings.nodeEnv === 'production' || !process.stdout.isTTY) return undefined;
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
