import type { Request, RequestHandler } from 'express';
import { answerInLane, isPlainGet, type LaneAnswer, type LaneRoute } from '../common/lane';
import type { AuthUser } from './guards/auth-user';

export type { LaneAnswer } from '../common/lane';

export interface SignedInLaneParts {
  /**
   * The routes the lane answers, by their full path as Nest registers them (`/api/v1/users/me`):
   * GET routes that only the global guards (the origin check and authentication) stand before,
   * each answered by its controller's own method.
   */
  routes: ReadonlyMap<string, (caller: AuthUser) => Promise<LaneAnswer>>;
  /** The caller as authentication finds it, or null where it would refuse (`JwtStrategy.callerOf`). */
  callerOf: (request: Request) => Promise<AuthUser | null>;
  /** Called for each request the lane answers itself (its caller authenticated), by route (a metric). */
  answered: (path: string) => void;
}

/**
 * The signed-in routes every app calls over and over (`GET /users/me`, `GET /nodes/routing`),
 * answered in front of Express (`src/system/front-door.ts`), right after the validate lane, instead
 * of through the cookie parser, CORS, the body parsers, the web app and Nest's router, guards and
 * interceptors, which cost more of these routes' CPU than the routes themselves (bench/RESULTS.md,
 * issue 46). The same idea as the validate lane.
 *
 * Only a plain GET of the exact path (no query) without a body (a body is refused by the general
 * pipeline's `NoBodyGuard`) and with no `Origin` (CORS then adds nothing, and the origin check passes
 * every GET) whose access token verifies is taken; anything else goes on to the
 * general pipeline, which refuses it exactly as before. Its session is read as authentication reads
 * it, and a session refused or failing to read is answered as the guard answers it. The answer is
 * the controller's own method's; its refusals (402 without a subscription, say) are answered by the
 * exception filter's code, as the general pipeline answers them.
 */
export function signedInLane(parts: SignedInLaneParts): RequestHandler {
  const { callerOf, answered } = parts;
  const lanes = new Map<string, LaneRoute<AuthUser>>();
  for (const [path, answer] of parts.routes) {
    const admit = async (request: Request): Promise<AuthUser | null> => {
      const caller = await callerOf(request);
      if (caller === null) return null;
      // Counted as taken: a refusal of the route's own (402, say) is the lane's answer too.
      answered(path);
      (request as { user?: AuthUser }).user = caller;
      return caller;
    };
    lanes.set(path, { path, admit, answer });
  }
  return (request, response, next) => {
    if (!isPlainGet(request)) return next();
    const route = lanes.get(request.url);
    if (route === undefined) return next();
    answerInLane(route, request, response, next);
  };
}
