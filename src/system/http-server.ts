import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
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
    super();
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
