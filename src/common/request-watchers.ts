import type { Request, RequestHandler, Response } from 'express';

/**
 * What every request passes first (its id and log line, its timing, the drain's count, the
 * security headers): called as the request arrives; what it returns, if anything, is called once
 * when the answer is over, sent or cut short by the client (`response.writableFinished` tells
 * which).
 */
export type RequestWatcher = (request: Request, response: Response) => (() => void) | void;

/**
 * The watchers as one middleware, in their order, with one `close` listener for all of them: a
 * response emits `close` once, after `finish` when it was sent and on its own when the client went
 * away first. One layer and one listener instead of a layer and two listeners each is a measurable
 * share of a small request's CPU (bench/RESULTS.md, issue 46).
 */
export function watchRequests(watchers: readonly RequestWatcher[]): RequestHandler {
  return (request, response, next) => {
    const ends: (() => void)[] = [];
    for (const watch of watchers) {
      const end = watch(request, response);
      if (end) ends.push(end);
    }
    if (ends.length > 0) {
      // `close` comes once: no `once` wrapper needed.
      response.on('close', () => {
        for (const end of ends) end();
      });
    }
    next();
  };
}
