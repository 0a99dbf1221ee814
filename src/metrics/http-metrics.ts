import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { RequestWatcher } from '../common/request-watchers';
import { Metrics } from './metrics.service';

/** The route label of a request no route matched (404s, bodies refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Times every request from its first byte to its answer, including those refused by guards,
 * throttles and the body parser. The label is the route template (`/api/v1/invoices/:id`), never
 * the raw URL, so made-up paths cannot grow the number of series.
 */
@Injectable()
export class HttpMetrics {
  constructor(private readonly metrics: Metrics) {}

  /** A request watcher (`watchRequests`): counts the request in flight, then times its answer. */
  readonly watch: RequestWatcher = (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    this.metrics.httpInFlight.inc();
    return () => {
      this.metrics.httpInFlight.dec();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.httpDuration.observe(
        {
          method: req.method,
          route: routeOf(req),
          status_class: res.writableFinished ? `${Math.floor(res.statusCode / 100)}xx` : 'aborted',
        },
        seconds,
      );
    };
  };
}

function routeOf(req: Request): string {
  const route = req.route as { path?: unknown } | undefined;
  // Nest answers unknown paths from a catch-all route (`/api/v1/{*path}`).
  if (typeof route?.path !== 'string' || route.path.includes('*')) return UNMATCHED_ROUTE;
  return req.baseUrl + route.path;
}
