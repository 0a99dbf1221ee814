import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

/** A client's own `X-Request-Id` is kept only in this form; anything else is replaced. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * First of all middleware: gives every request its id and `X-Request-Id`, and writes the request's
 * one log line when its answer is sent, or when the client goes away first: id, method, path
 * (never the query), client address, status and time in ms; at `info`, `warn` for a 4xx or an
 * aborted request, `error` for a 5xx. Requests refused before routing (body parser, hostile input,
 * draining) get theirs the same way, so every error body's `request_id` has its line.
 *
 * `logger()` is the application's root logger; undefined when logging is off, and then nothing is
 * listened for. The line is written by a child of it without the root's redaction: it holds only
 * the fields above, none of them secret (the path never carries the query), and the redaction's
 * copy of each line cost more than writing it (bench/RESULTS.md).
 */
export function requestLog(logger: () => Logger | undefined) {
  let root: Logger | undefined;
  let lines: Logger | undefined;
  const accessLogger = (): Logger | undefined => {
    const current = logger();
    if (current !== root) {
      root = current;
      lines = current?.child({}, { redact: [] });
    }
    return lines;
  };
  return (request: Request, response: Response, next: NextFunction): void => {
    const id = requestIdOf(request.headers['x-request-id']);
    (request as { id?: string }).id = id;
    response.setHeader('X-Request-Id', id);
    const log = accessLogger();
    if (log) {
      const started = performance.now();
      // Read now: once a client has gone away its socket no longer knows the address.
      const remoteAddress = request.socket.remoteAddress;
      const write = (): void => {
        response.off('finish', write);
        response.off('close', write);
        const { statusCode } = response;
        const line = {
          req: {
            id,
            method: request.method,
            url: request.originalUrl.split('?')[0],
            remoteAddress,
          },
          res: { statusCode },
          responseTime: Math.round(performance.now() - started),
        };
        if (!response.writableFinished) log.warn(line, 'request aborted');
        else if (statusCode >= 500) log.error(line, 'request completed');
        else if (statusCode >= 400) log.warn(line, 'request completed');
        else log.info(line, 'request completed');
      };
      response.on('finish', write);
      response.on('close', write);
    }
    next();
  };
}
