import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

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

  readonly middleware: RequestHandler = (_req: Request, res: Response, next: NextFunction) => {
    this.active.add(res);
    if (this.draining) res.setHeader('Connection', 'close');
    const finish = () => {
      if (this.active.delete(res) && this.active.size === 0) this.wake();
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
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
