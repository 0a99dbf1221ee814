import { isUUID } from 'class-validator';
import type { Request, RequestHandler } from 'express';
import { answerInLane, isPlainGet, type LaneRoute } from '../common/lane';
import { canonicalUuid } from '../common/uuid';
import type { InternalCallers } from '../nodes/internal-callers';
import type { CredentialsController } from './devices.controller';
import type { CredentialsQuery } from './dto/devices.dto';

export interface CredentialsLaneParts {
  /** The route's full path, as Nest registers it (`/api/v1/internal/credentials`). */
  path: string;
  callers: InternalCallers;
  controller: CredentialsController;
  /** Called for each request the lane answers itself (a metric). */
  answered: () => void;
}

/**
 * GET /internal/credentials, every node's poll for its device set (once a `CREDENTIALS_POLL_S`),
 * answered in front of Express (`src/system/front-door.ts`) as the validate lane answers token
 * validations, instead of through the cookie parser, CORS, the body parsers, the web app and
 * Nest's router, guard and validation pipe, which cost about as much of the poll's CPU as the
 * poll itself (bench/RESULTS.md, issue 46).
 *
 * Only a request the route would accept is answered here: a plain GET without a body or `Origin`,
 * its query exactly as the agent writes it (`plainQuery`), a node speaking for itself (or
 * INTERNAL_SECRET). Every other request goes on to the general pipeline, which answers or refuses
 * it exactly as before. The answer is the controller's own method's, and errors are answered by
 * the exception filter's code.
 */
export function credentialsLane(parts: CredentialsLaneParts): RequestHandler {
  const { path, callers, controller, answered } = parts;
  const route: LaneRoute<CredentialsQuery> = {
    path,
    admit: async (request: Request) => {
      const query = plainQuery(request.url.slice(path.length));
      if (query === null) return null;
      const secret = request.header('x-internal-secret');
      return (await callers.speaksForNode(secret, query.node_id)) ? query : null;
    },
    answer: async (query) => {
      const answer = await controller.credentialsOf(query);
      // Counted once answered: a poll that fails is not.
      answered();
      return answer;
    },
  };
  return (request, response, next) => {
    if (!takes(request, path)) return next();
    answerInLane(route, request, response, next);
  };
}

/** The agent's query: the node's id, then the version it has. */
const AGENT_QUERY = /^\?node_id=([0-9A-Fa-f-]{36})&since=(\d{1,16})$/;

/**
 * `search` (the URL's query, with its `?`) as the route's `CredentialsQuery` when it is plainly
 * what the agent sends: `node_id` a UUID in either case (as `IsUUID('all')` takes it), then
 * `since` a whole number written in at most 16 digits and at most 2^53 - 1, nothing else; else
 * null, and the general pipeline answers it by the DTO's own rules. So this is narrower than the
 * DTO, never wider (`test/credentials-lane.e2e-spec.ts` holds the two side by side).
 */
export function plainQuery(search: string): CredentialsQuery | null {
  const match = AGENT_QUERY.exec(search);
  if (match === null) return null;
  const [, nodeId, version] = match;
  const since = Number(version);
  // The DTO's own check (`IsUUID('all')`: a version and variant digit), then the canonical form.
  if (!isUUID(nodeId, 'all') || canonicalUuid(nodeId) === undefined) return null;
  if (!Number.isSafeInteger(since)) return null;
  return { node_id: nodeId, since };
}

/** A plain GET (`isPlainGet`) of the route with a query. */
function takes(request: Request, path: string): boolean {
  const { url } = request;
  return isPlainGet(request) && url.startsWith(path) && url.charCodeAt(path.length) === 0x3f; // ?
}
