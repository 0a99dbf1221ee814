import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type INestApplication, Logger } from '@nestjs/common';
import { JobRunner } from '../scheduler/job-runner.service';
import { Drain } from './drain';

/** Of the grace, what is kept for closing the app and its pool once requests are done or cut. */
const CLOSE_RESERVE_MS = 1_000;

/**
 * SIGTERM, in three steps that together take at most `graceMs`:
 * 1. drain: for `drainMs` the service keeps serving, but `/health` answers 503 and every answer
 *    closes its connection, so a load balancer takes the instance out of rotation before it stops
 *    accepting; no job starts again;
 * 2. the listener closes (new connections are refused, idle ones closed); requests in flight and
 *    running jobs get what is left of the grace, less a reserve for step 3; what is still open
 *    then is cut;
 * 3. the app and its pool close.
 * Resolves true when all of it finished within the grace, false when closing the app ran past it
 * (a statement still running keeps the pool open): the caller exits anyway.
 */
export async function gracefulClose(
  app: INestApplication,
  { drainMs, graceMs }: { drainMs: number; graceMs: number },
): Promise<boolean> {
  const logger = new Logger('Shutdown');
  const deadline = performance.now() + graceMs;
  const left = (reserve = 0) => Math.max(0, deadline - performance.now() - reserve);
  const reserve = Math.min(CLOSE_RESERVE_MS, Math.max(0, graceMs - drainMs) / 2);

  const drain = app.get(Drain);
  drain.begin();
  const jobs = app.get(JobRunner).stop(left(reserve));
  // A timer counts from the time the event loop last read, which a busy loop read some
  // milliseconds before this handler ran: it may end that much early, so sleep again until the
  // whole drain has passed.
  const drained = performance.now() + drainMs;
  for (let wait = drainMs; wait > 0; wait = drained - performance.now()) await sleep(wait);

  const server = app.getHttpServer() as Server;
  server.close();
  if (!(await drain.settled(left(reserve)))) {
    logger.warn(
      `${drain.inFlight} request(s) still in flight at the end of the grace; cutting them`,
    );
    server.closeAllConnections();
  }
  await jobs;

  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    app.close().then(
      () => true,
      (error: unknown) => {
        logger.warn(`closing the app failed: ${String(error)}`);
        return false;
      },
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), left()))),
  ]);
  clearTimeout(timer);
  if (!closed) logger.warn('the app did not close within the grace; exiting anyway');
  return closed;
}
