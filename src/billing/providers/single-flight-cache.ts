import type { Clock } from '../clock';

/**
 * One upstream answer shared by every caller for `ttlMs` after it arrived (by `clock`), with
 * concurrent misses sharing one request. A failure is kept for the same window, so an upstream
 * that is down is not asked again by every caller either.
 */
export class SingleFlightCache<T> {
  private inFlight: Promise<T> | null = null;
  private settled: { outcome: Promise<T>; at: number } | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  get(load: () => Promise<T>): Promise<T> {
    if (this.settled && this.clock.now() - this.settled.at < this.ttlMs) {
      return this.settled.outcome;
    }
    if (!this.inFlight) {
      const flight: Promise<T> = load().finally(() => {
        this.settled = { outcome: flight, at: this.clock.now() };
        this.inFlight = null;
      });
      // Callers handle the failure; this keeps a kept, unawaited failure from being "unhandled".
      flight.catch(() => undefined);
      this.inFlight = flight;
    }
    return this.inFlight;
  }
}
