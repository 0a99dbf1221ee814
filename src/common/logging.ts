import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { type Settings } from '../config/settings';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

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

/** One JSON line per request, carrying its request id (echoed as `X-Request-Id`). */
export function loggerOptions(settings: Settings): Params {
  return {
    pinoHttp: {
      // With logging off, the per-request hooks would only cost time (a fifth of a request's CPU).
      autoLogging: settings.logLevel !== 'silent',
      level: settings.logLevel,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      genReqId: (req: IncomingMessage, res: ServerResponse) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (req: {
          id: string;
          method: string;
          url: string;
          headers: Record<string, unknown>;
          remoteAddress?: string;
        }) => ({
          id: req.id,
          method: req.method,
          url: req.url?.split('?')[0],
          headers: req.headers,
          remoteAddress: req.remoteAddress,
        }),
      },
    },
  };
}
