import type { Server } from 'node:http';
import { type INestApplication, Logger } from '@nestjs/common';
import { JobRunner } from '../scheduler/job-runner.service';
import { Drain } from './drain';

/**
 * SIGTERM: `/health` answers 503 at once and no job starts again; requests in flight and running
 * jobs get up to `graceMs` to finish (new requests are still served, with `Connection: close`,
 * until the load balancer notices); then the app and its pool close. What is still open after the
 * grace is cut.
 */
export async function gracefulClose(app: INestApplication, graceMs: number): Promise<void> {
  const logger = new Logger('Shutdown');
  const drain = app.get(Drain);
  drain.begin();
  const [settled] = await Promise.all([drain.settled(graceMs), app.get(JobRunner).stop(graceMs)]);
  if (!settled) {
    logger.warn(`${drain.inFlight} request(s) still in flight after ${graceMs} ms; cutting them`);
    (app.getHttpServer() as Server).closeAllConnections();
  }
  await app.close();
}
