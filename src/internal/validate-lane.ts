import { isUUID } from 'class-validator';
import type { Request, RequestHandler } from 'express';
import getRawBody from 'raw-body';
import { JSON_PARSE_FAILED, PLAIN_JSON, parseStrictJson } from '../common/body-parsing';
import { answerInLane, isNotFromBrowser, type LaneRoute } from '../common/lane';
import { canonicalUuid } from '../common/uuid';
import type { InternalCallers } from '../nodes/internal-callers';
import { MAX_TOKEN_LENGTH, type ValidateTokenRequest } from './dto/internal.dto';
import type { InternalController } from './internal.controller';

export interface ValidateLaneParts {
  /** The route's full path, as Nest registers it (`/api/v1/internal/validate`). */
  path: string;
  /** BODY_LIMIT in bytes. */
  bodyLimit: number;
  callers: InternalCallers;
  controller: InternalController;
  /** Called for each request the lane answers itself (a metric). */
  answered: () => void;
}

/**
 * POST /internal/validate, the call behind every tunnel connection a node admits, answered in front
 * of Express (`src/system/front-door.ts`) right after what every request passes (request id and log
 * line, metrics, drain, security headers), instead of going through the body parser, through
 * cookies, CORS, the web app and Nest's router, guards and pipes: on a 2-core machine those cost
 * three quarters of the route's CPU (bench/RESULTS.md, issue 28).
 *
 * Only a request the route would accept is answered here: a node speaking for itself (or
 * INTERNAL_SECRET), a body of the route's two fields as its validation pipe takes them
 * (`plainRequest`), no `Origin` (CORS and the origin check then have nothing to do). Every other
 * request, once its body is read, goes on to the general pipeline, which refuses it exactly as
 * before. The answer is the controller's own method's, and errors are answered by the exception
 * filter's code.
 */
export function validateLane(parts: ValidateLaneParts): RequestHandler {
  const { path, bodyLimit, callers, controller, answered } = parts;
  const route: LaneRoute<ValidateTokenRequest> = {
    path,
    admit: async (request: Request) => {
      const input = plainRequest(request.body);
      if (input === null) return null;
      const secret = request.header('x-internal-secret');
      return (await callers.speaksForNode(secret, input.node_id)) ? input : null;
    },
    answer: async (input) => {
      const answer = await controller.validate(input);
      // Counted once answered: a validation that fails is not.
      answered();
      return answer;
    },
  };
  return (request, response, next) => {
    if (!takes(request, path, bodyLimit)) return next();
    const length = Number(request.headers['content-length']);
    getRawBody(request, { length, limit: bodyLimit, encoding: 'utf-8' }, (error, text) => {
      // raw-body's errors are the body parser's own (it reads with raw-body): refused alike.
      if (error) return next(error);
      const body = parseStrictJson(text);
      if (body === undefined) return next(JSON_PARSE_FAILED);
      request.body = body;
      answerInLane(route, request, response, next);
    });
  };
}

/**
 * The body as `{token, node_id}` when it is plainly what the route's DTO takes: an object of
 * exactly those two keys, `token` a string of at most MAX_TOKEN_LENGTH characters with no NUL,
 * `node_id` a UUID in either case; else null, and the general pipeline answers it by the DTO's
 * own rules. So this may be narrower than the DTO, never wider (validate-lane.spec.ts holds the
 * two side by side). It is what a node sends, read in a few property reads: class-validator's pipe
 * took 6 % of the route's CPU.
 */
export function plainRequest(body: unknown): ValidateTokenRequest | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  let keys = 0;
  for (const key in body) {
    if (key !== 'token' && key !== 'node_id') return null;
    keys++;
  }
  const { token, node_id: nodeId } = body as Record<string, unknown>;
  if (keys !== 2 || typeof token !== 'string' || typeof nodeId !== 'string') return null;
  if (token.length > MAX_TOKEN_LENGTH || token.includes('\u0000')) return null;
  // The DTO's own check (`IsUUID('all')`: a version and variant digit), then the canonical form.
  if (!isUUID(nodeId, 'all') || canonicalUuid(nodeId) === undefined) return null;
  return { token, node_id: nodeId };
}

/**
 * A request the lane reads: the route, plain JSON of a declared length within the limit (a larger
 * one is refused up front by the general pipeline), not compressed, not from a browser (no
 * `Origin` or `Referer`).
 */
function takes(request: Request, path: string, bodyLimit: number): boolean {
  const { headers } = request;
  const length = Number(headers['content-length']);
  return (
    isNotFromBrowser(request) &&
    request.url === path &&
    headers['content-encoding'] === undefined &&
    headers['transfer-encoding'] === undefined &&
    length > 0 &&
    length <= bodyLimit &&
    PLAIN_JSON.test(headers['content-type'] ?? '')
  );
}
