/**
 * Concurrent callers share one run of `work`, but only a run that starts after they asked: a caller
 * arriving while a run is under way waits for the next one (which every caller arriving meanwhile
 * joins), so nobody is answered from a read that predates the call.
 */
export class FreshRun<T> {
  private current: Promise<T> | null = null;
  private queued: Promise<T> | null = null;

  run(work: () => Promise<T>): Promise<T> {
    if (!this.current) return this.start(work);
    if (!this.queued) {
      this.queued = this.current
        .catch(() => undefined)
        .then(() => {
          this.queued = null;
          return this.start(work);
        });
    }
    return this.queued;
  }

  private start(work: () => Promise<T>): Promise<T> {
    const running = work();
    this.current = running;
    const clear = () => {
      if (this.current === running) this.current = null;
    };
    running.then(clear, clear);
    return running;
  }
}

/**
 * Spaces the starts of upstream requests at least `gapMs` apart (the upstream's requests-per-second
 * allowance), in the order they asked.
 */
export class Pacer {
  private nextStart = 0;

  constructor(private readonly gapMs: number) {}

  async turn(): Promise<void> {
    const now = Date.now();
    const start = Math.max(now, this.nextStart);
    this.nextStart = start + this.gapMs;
    if (start > now) await new Promise((resolve) => setTimeout(resolve, start - now));
  }
}
