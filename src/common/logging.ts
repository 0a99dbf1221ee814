import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import pino from 'pino';
import type { Options } from 'pino-http';
import { type Settings } from '../config/settings';
import { requestIdOf } from './request-id';

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
 * One JSON line per request, carrying its request id (echoed as `X-Request-Id`), method, path,
 * status and time; pretty-printed instead for a person at a terminal outside production.
 *
 * The line is kept lean because it is written for every request: no header dump (it cost more
 * than the rest of the line, and carried cookies to redact), the serializers take Node's own
 * request and response as they are (pino-http's wrappers would first copy every header), and the
 * lines go out through an asynchronous buffered destination instead of one synchronous write
 * each. pino flushes that buffer synchronously when the process exits, so a shutdown keeps them.
 */
export function loggerOptions(settings: Settings): Params {
  const transport = prettyTransport(settings);
  const options: Options = {
    transport,
    // With logging off, the per-request hooks would only cost time (a fifth of a request's CPU).
    autoLogging: settings.logLevel !== 'silent',
    level: settings.logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Only when the request-id middleware (request-id.ts) did not already give one.
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const id = requestIdOf(req.headers['x-request-id']);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) =>
      err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    wrapSerializers: false,
    serializers: {
      req: (req: IncomingMessage & { id: string; originalUrl?: string }) => ({
        id: req.id,
        method: req.method,
        url: (req.originalUrl ?? req.url)?.split('?')[0],
        remoteAddress: req.socket?.remoteAddress,
      }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      err: pino.stdSerializers.err,
    },
  };
  if (transport || settings.logLevel === 'silent') return { pinoHttp: options };
  return { pinoHttp: [options, pino.destination({ dest: 1, sync: false })] };
}

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
