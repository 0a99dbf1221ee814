import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { errorBody } from './error-body';
import type { RequestWatcher } from './request-watchers';

/** A client's own `X-Request-Id` is kept only in this form; anything else is replaced. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Path segments that are secrets: a bot login code lets whoever reads it open `start=login_<code>`
 * within its 10 minutes; a subscription link's token gives its servers. Access lines and error
 * logs write `[redacted]` instead.
 */
const PATH_SECRETS: readonly RegExp[] = [
  /(\/auth\/bot\/login-codes\/)[^/]+/,
  // A subscription link's token is the link's only key.
  /^(\/sub\/)[^/]+/,
];

/** `path` as it may be logged: without the secrets some routes carry in their path. */
export function loggablePath(path: string): string {
  return PATH_SECRETS.reduce((shown, secret) => shown.replace(secret, '$1[redacted]'), path);
}

/** The answer in progress on each connection, for refusals the HTTP server makes itself. */
const inFlight = new WeakMap<Socket, Response>();

/**
 * First of all watchers: gives every request its id and `X-Request-Id`, and writes the request's
 * one log line when its answer is over, sent or cut short by the client: id, method, path
 * (never the query, and path secrets redacted), the client address the throttles use (`req.ip`,
 * which follows TRUST_PROXY), status and time in ms; at `info`, `warn` for a 4xx or an
 * aborted request, `error` for a 5xx. Requests refused before routing (body parser, hostile input,
 * draining) get theirs the same way, so every error body's `request_id` has its line.
 *
 * `logger()` is the application's root logger; undefined when logging is off, and then no line is
 * written. The line is written by a child of it without the root's redaction: it holds only
 * the fields above, none of them secret (the path never carries the query), and the redaction's
 * copy of each line cost more than writing it (bench/RESULTS.md).
 */
export function requestLog(logger: () => Logger | undefined): RequestWatcher {
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
  return (request, response) => {
    const id = requestIdOf(request.headers['x-request-id']);
    (request as { id?: string }).id = id;
    response.setHeader('X-Request-Id', id);
    const { socket } = request;
    inFlight.set(socket, response);
    const log = accessLogger();
    const started = log ? performance.now() : 0;
    // Read now: once a client has gone away its socket no longer knows the address.
    const remoteAddress = log ? request.ip : undefined;
    return () => {
      if (inFlight.get(socket) === response) inFlight.delete(socket);
      if (!log) return;
      const { statusCode } = response;
      const line = {
        req: {
          id,
          method: request.method,
          url: loggablePath(request.originalUrl.split('?')[0]),
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
  };
}

/** What the HTTP server refuses before the application answers, by Node's error code. */
const CLIENT_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    message: 'the request was not received in time',
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'HEADERS_TOO_LARGE',
    message: 'the request headers are too large',
  },
};
const MALFORMED = { status: 400, code: 'VALIDATION_FAILED', message: 'malformed HTTP request' };

/**
 * The HTTP server's `clientError` listener: a request too slow (408), headers too large (431) or
 * not HTTP (400) gets the contract's error body with its request id, as every other refusal, and
 * an access-log line; then the connection closes. A request already handed to the application is
 * answered through its own response (its id, headers and log line); one refused while its head
 * was read has neither yet.
 */
export function refuseClientErrors(logger: () => Logger | undefined) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    const refusal = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED;
    const response = inFlight.get(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    if (response) {
      const id = String(response.getHeader('X-Request-Id'));
      response.statusCode = refusal.status;
      response.setHeader('Connection', 'close');
      response.setHeader('Content-Type', 'application/json; charset=utf-8');
      response.end(JSON.stringify(bodyOf(refusal, id)), () => socket.destroy());
      return;
    }
    const id = randomUUID();
    const body = JSON.stringify(bodyOf(refusal, id));
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\n` +
        `Connection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
    logger()?.warn(
      { req: { id, remoteAddress: socket.remoteAddress }, res: { statusCode: refusal.status } },
      'request refused',
    );
  };
}

function bodyOf(refusal: { status: number; code: string; message: string }, id: string) {
  return errorBody(refusal.status, refusal.code, refusal.message, { request_id: id });
}
