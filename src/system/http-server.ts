import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import type { Settings } from '../config/settings';

/** How often Node checks the timeouts below: without it, a slow client is noticed after 30 s. */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * Express on an HTTP server with timeouts suited to an API, so slow clients cannot hold
 * connections: the headers within HTTP_HEADERS_TIMEOUT_MS, the whole request within
 * HTTP_REQUEST_TIMEOUT_MS (else 408 and the connection is closed), an idle keep-alive connection
 * kept HTTP_KEEP_ALIVE_TIMEOUT_MS (longer than the load balancer's, which then closes first), and at
 * most HTTP_MAX_CONNECTIONS open at once (more are closed at once).
 */
export class TimedExpressAdapter extends ExpressAdapter {
  constructor(private readonly settings: Settings) {
    super(caseSensitiveExpress());
  }

  override initHttpServer(_options: NestApplicationOptions): void {
    const { http } = this.settings;
    const server = createServer(
      {
        ...expressMessages(this.getInstance<express.Express>()),
        headersTimeout: http.headersTimeoutMs,
        requestTimeout: http.requestTimeoutMs,
        keepAliveTimeout: http.keepAliveTimeoutMs,
        connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, http.headersTimeoutMs),
      },
      this.getInstance(),
    );
    server.maxConnections = http.maxConnections;
    this.httpServer = server;
  }
}

/**
 * The server's request and response classes: Node's, whose objects have Express's prototypes
 * (`app.request`, `app.response`) from the start. Express sets them on each request instead
 * (`Object.setPrototypeOf` in `app.handle`), and V8 then gives each such object a hidden class of
 * its own for every property it gains afterwards (`req.res`, `req.id`, `req.user`, …): about 6 KB
 * of maps a request, all of it garbage for the old generation's collections, and property reads
 * that never settle on a shape. Made this way, Express's setting of the prototype each object
 * already has changes nothing, and every request shares its hidden classes with the others
 * (bench/RESULTS.md, issue 46).
 */
function expressMessages(app: express.Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  // Node's own constructors are functions, called here on the new object with the server's
  // arguments; the form `Reflect.construct(IncomingMessage, args, ExpressRequest)` gave every
  // object a hidden class of its own again.
  function ExpressRequest(this: IncomingMessage, ...args: unknown[]): void {
    Reflect.apply(IncomingMessage, this, args);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: ServerResponse, ...args: unknown[]): void {
    Reflect.apply(ServerResponse, this, args);
  }
  ExpressResponse.prototype = app.response;
  return {
    IncomingMessage: ExpressRequest as unknown as typeof IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof ServerResponse,
  };
}

/**
 * Express with case-sensitive routing: `/api/v1/…` is the API and `/API/v1/…` is not, as the web
 * app (`web-app.ts`), the body limits per route and every other check by path already read it.
 * Express's default matched routes in any case, so `POST /API/v1/…` reached the API while
 * `GET /API/v1/…` got the web app. Set before the adapter's first middleware creates the router,
 * which reads the setting once.
 */
function caseSensitiveExpress(): express.Express {
  const app = express();
  app.set('case sensitive routing', true);
  return app;
}
