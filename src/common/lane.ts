import type { NextFunction, Request, Response } from 'express';
import { answerError } from './all-exceptions.filter';

/** What a lane route answers: an object sent as JSON, or JSON text the route made itself. */
export type LaneAnswer = object | string;

/** A hot route answered by a lane, ahead of Nest's pipeline (the validate and signed-in lanes). */
export interface LaneRoute<Input> {
  /** The route's full path as Nest registers it: the template the HTTP metrics label it with. */
  path: string;
  /**
   * What the route's method takes from a request the lane answers itself, or null for one that
   * goes on to the general pipeline (which then answers or refuses it exactly as before).
   */
  admit: (request: Request) => Promise<Input | null>;
  /** The answer: the controller's own method's. */
  answer: (input: Input) => Promise<LaneAnswer>;
}

/**
 * A POST no browser sent: without `Origin` or `Referer`, so that CORS adds nothing and the origin
 * check (which reads the Referer when there is no Origin, on a POST even without cookies) would
 * pass it. Each POST lane takes only such a request.
 */
export function isNotFromBrowser(request: Request): boolean {
  const { headers } = request;
  return request.method === 'POST' && headers.origin === undefined && headers.referer === undefined;
}

/**
 * A GET a lane may take: without a body (none declared, or an empty one), a declared encoding
 * (refused with a 415 by the body parser even without a body) or `Origin` (CORS then adds
 * nothing, and the origin check passes every GET).
 */
export function isPlainGet(request: Request): boolean {
  const { headers } = request;
  return (
    request.method === 'GET' &&
    headers.origin === undefined &&
    headers['content-encoding'] === undefined &&
    headers['transfer-encoding'] === undefined &&
    (headers['content-length'] === undefined || headers['content-length'] === '0')
  );
}

/**
 * Answers `request` by `route`: 200 and the route's answer when `admit` takes it, else on to
 * `next`. A failure of either is answered by the exception filter's code, as the general pipeline
 * answers it.
 */
export function answerInLane<Input>(
  route: LaneRoute<Input>,
  request: Request,
  response: Response,
  next: NextFunction,
): void {
  run(route, request, response, next).catch((failure: unknown) =>
    answerError(failure, request, response),
  );
}

async function run<Input>(
  route: LaneRoute<Input>,
  request: Request,
  response: Response,
  next: NextFunction,
): Promise<void> {
  const input = await route.admit(request);
  if (input === null) return next();
  // The route template, as the HTTP metrics label it.
  (request as { route?: unknown }).route = { path: route.path };
  const body = await route.answer(input);
  // Written as Express's `json()` writes it, without its content-type parsing, freshness check and
  // ETag setting, which a lane's GET or POST without caching never uses.
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}
