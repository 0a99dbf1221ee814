import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { PinoLogger } from 'nestjs-pino';

/** A client's own `X-Request-Id` is kept only in this form; anything else is replaced. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * First of all middleware: gives every request its id and `X-Request-Id`, and logs, in the access
 * log's shape, the requests refused before the access logger saw them (body parser, hostile input,
 * draining), so every request has one log line whose id its error body carries.
 */
export function requestIds(logRefused: boolean) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const id = requestIdOf(request.headers['x-request-id']);
    (request as { id?: string }).id = id;
    response.setHeader('X-Request-Id', id);
    if (logRefused) {
      const started = performance.now();
      response.once('finish', () => {
        // pino-http sets `log` on the requests it logs itself.
        if ((request as { log?: unknown }).log !== undefined) return;
        PinoLogger.root?.warn(
          {
            req: { id, method: request.method, url: request.originalUrl.split('?')[0] },
            res: { statusCode: response.statusCode },
            responseTime: Math.round(performance.now() - started),
          },
          'request refused',
        );
      });
    }
    next();
  };
}
