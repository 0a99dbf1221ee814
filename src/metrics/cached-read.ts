/**
 * A value read at most once per `ttlMs` and waited for at most `timeoutMs`. A read that fails or
 * is late leaves the last value in place (undefined until one succeeds) and calls `onFailure`, so a
 * slow database never fails a scrape; a late read still lands for the next one. Concurrent scrapes
 * share one read.
 */
export class CachedRead<T> {
  private value: T | undefined;
  private readAt = -Infinity;
  private pending: Promise<void> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly options: { ttlMs: number; timeoutMs: number; onFailure: () => void },
  ) {}

  async get(): Promise<T | undefined> {
    if (this.value !== undefined && performance.now() - this.readAt < this.options.ttlMs) {
      return this.value;
    }
    this.pending ??= this.refresh();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.options.timeoutMs);
    });
    const outcome = await Promise.race([this.pending, late]);
    clearTimeout(timer);
    if (outcome === 'late') this.options.onFailure();
    return this.value;
  }

  private async refresh(): Promise<void> {
    try {
      this.value = await this.read();
      this.readAt = performance.now();
    } catch {
      this.options.onFailure();
    } finally {
      this.pending = null;
    }
  }
}
