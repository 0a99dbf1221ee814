import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';

/** What a lane passed on with an error, for `laneErrors` to raise inside Express. */
const passedOn = new WeakMap<IncomingMessage, unknown>();

/**
 * The HTTP server's request listener, in front of Express's router: every request passes `watch`
 * (its id and log line, timing, drain, security headers: `watchRequests`), then each lane in turn
 * may answer it; whatever the lanes pass on goes to the Express application from its start, as it
 * would without them, and an error a lane passes on is raised there by `laneErrors`.
 *
 * The lanes answer the routes every app and node calls over and over (GET /users/me and
 * /nodes/routing, POST /internal/validate): Express's router cost each of them about a tenth of its
 * CPU and more of its garbage (bench/RESULTS.md, issue 46), and they need none of it. They get the
 * request and response Express would give them: the server makes them with Express's prototypes
 * (`http-server.ts`), and the few fields `app.handle` sets are set here.
 */
export function frontDoor(
  app: Express,
  watch: RequestHandler,
  lanes: readonly RequestHandler[],
): RequestListener {
  return (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const request = incoming as Request;
    const response = outgoing as Response;
    // What Express's `app.handle` and router set before the first middleware, its prototypes apart.
    request.res = response;
    response.req = request;
    response.locals = Object.create(null) as Record<string, unknown>;
    request.originalUrl = request.url;
    request.baseUrl = '';
    let next = 0;
    const pass: NextFunction = (error?: unknown) => {
      if (error !== undefined && error !== null) {
        passedOn.set(incoming, error);
        return app(request, response);
      }
      const lane = lanes[next++];
      if (lane === undefined) return app(request, response);
      lane(request, response, pass);
    };
    watch(request, response, pass);
  };
}

/** Express's first middleware: raises the error a lane passed on, where Express's handlers meet it. */
export const laneErrors: RequestHandler = (request, _response, next) => {
  const error = passedOn.get(request);
  if (error === undefined) return next();
  passedOn.delete(request);
  next(error);
};
