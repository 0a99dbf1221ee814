import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { RequestWatcher } from '../common/request-watchers';

/**
 * The service's shutdown state. On SIGTERM `begin()` turns `/health` to 503 at once, so the load
 * balancer stops sending work; answers from then on close their connection; `settled()` waits for
 * the requests still in flight.
 */
@Injectable()
export class Drain {
  private readonly active = new Set<Response>();
  private draining = false;
  private waiters: (() => void)[] = [];

  get isDraining(): boolean {
    return this.draining;
  }

  get inFlight(): number {
    return this.active.size;
  }

  /** A request watcher (`watchRequests`): the request is in flight until its answer is over. */
  readonly watch: RequestWatcher = (_req: Request, res: Response) => {
    this.active.add(res);
    if (this.draining) res.setHeader('Connection', 'close');
    return () => {
      if (this.active.delete(res) && this.active.size === 0) this.wake();
    };
  };

  begin(): void {
    this.draining = true;
    for (const res of this.active) if (!res.headersSent) res.setHeader('Connection', 'close');
  }

  /** Resolves true once no request is in flight, or false after `timeoutMs`. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.active.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
