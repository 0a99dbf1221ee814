import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { createServer } from 'node:http';
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
