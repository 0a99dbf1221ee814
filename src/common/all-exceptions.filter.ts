import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Logger,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { isDatabaseUnavailable, isInvalidInput } from '../database/postgres-errors';
import { errorBody } from './error-body';
import { loggablePath } from './request-id';
import { AppError, type ErrorCode } from './errors';
import { RawResponseException } from './raw-response.exception';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/** Gives every error the contract's body; logs the unexpected with the request id, reveals nothing. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    answerError(exception, http.getRequest<Request>(), http.getResponse<Response>());
  }
}

const logger = new Logger('Errors');

/**
 * Answers an error in the contract's body, with its request id: the exception filter's answer, and
 * that of routes answered before Nest's pipeline (the agents' validate lane).
 */
export function answerError(exception: unknown, request: Request, response: Response): void {
  if (response.headersSent) return;

  if (exception instanceof RawResponseException) {
    response.status(exception.getStatus()).json(exception.getResponse());
    return;
  }
  // Every refusal names its request, as in X-Request-Id and its access-log line.
  const requestId = String((request as { id?: string }).id ?? 'unknown');
  if (exception instanceof AppError) {
    for (const [name, value] of Object.entries(exception.headers ?? {}))
      response.setHeader(name, value);
    response.status(exception.status).json(
      errorBody(exception.status, exception.code, exception.message, {
        details: exception.details,
        request_id: requestId,
      }),
    );
    return;
  }
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    const status = exception.getStatus();
    const code = CODE_BY_STATUS[status] ?? 'CONFLICT';
    response
      .status(status)
      .json(errorBody(status, code, messageOf(exception, request), { request_id: requestId }));
    return;
  }

  if (isDatabaseUnavailable(exception)) {
    // Expected while PostgreSQL restarts: the pool reconnects by itself; the client may retry.
    logger.warn(
      {
        err: { message: String((exception as { message?: unknown }).message) },
        request_id: requestId,
      },
      `database unavailable on ${request.method} ${loggablePath(request.path)}`,
    );
    response
      .status(503)
      .setHeader('Retry-After', '5')
      .json(
        errorBody(503, 'UPSTREAM_UNAVAILABLE', 'database unavailable, try again shortly', {
          request_id: requestId,
        }),
      );
    return;
  }
  if (isInvalidInput(exception)) {
    // Validation should have refused it first: logged, so that the missing rule gets written.
    logger.warn(
      { err: loggable(exception), request_id: requestId },
      `database refused a value of ${request.method} ${loggablePath(request.path)}`,
    );
    response.status(400).json(
      errorBody(400, 'VALIDATION_FAILED', 'request validation failed', {
        details: [{ field: 'body', message: 'holds a value the database cannot store' }],
        request_id: requestId,
      }),
    );
    return;
  }
  logger.error(
    { err: loggable(exception), request_id: requestId },
    `unexpected error on ${request.method} ${loggablePath(request.path)}`,
  );
  response
    .status(500)
    .json(errorBody(500, 'INTERNAL', 'internal error', { request_id: requestId }));
}

function messageOf(exception: HttpException, request: Request): string {
  if (exception.getStatus() === 404 && !(exception.getResponse() as { code?: string }).code) {
    return `no route ${request.method} ${request.path}`;
  }
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' ? message : exception.message;
}

/**
 * What of an unexpected error may be logged: its kind, message, database error code and stack.
 * Database errors also carry their SQL parameters (password hashes, invoice rows): never logged.
 */
function loggable(exception: unknown): Record<string, unknown> {
  if (!(exception instanceof Error)) return { type: typeof exception };
  const driverCode = (exception as { driverError?: { code?: unknown } }).driverError?.code;
  return {
    type: exception.name,
    message: exception.message,
    ...(driverCode === undefined ? {} : { code: driverCode }),
    stack: exception.stack,
  };
}
