/**
 * One value read at most once per `ttlMs`, by one read at a time: callers during a read share it.
 * For reads that are the same for everyone and may lag a little (the leaderboard, the routing
 * counter, the figures a metrics scrape reads), so a flood of callers costs one query per period.
 */
export class CachedRead<T> {
  private value: { at: number; data: T } | null = null;
  private pending: Promise<T> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly ttlMs: number,
    /** A monotonic clock in ms. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The value, read anew when older than `ttlMs`; a failed read rejects and is not kept. */
  get(): Promise<T> {
    const value = this.value;
    if (value && this.now() - value.at < this.ttlMs) return Promise.resolve(value.data);
    this.pending ??= this.read()
      .then((data) => {
        this.value = { at: this.now(), data };
        return data;
      })
      .finally(() => {
        this.pending = null;
      });
    return this.pending;
  }

  /**
   * The value as `get` reads it, waited for at most `timeoutMs`: a read that fails or is late
   * answers with the last value (undefined until one succeeds), so a slow database never fails a
   * metrics scrape, and a late read still lands for the next caller. `onFailure` is called once
   * per failed read (by the caller that started it) and once per caller that gave up waiting.
   */
  async within(timeoutMs: number, onFailure: () => void): Promise<T | undefined> {
    const before = this.pending;
    const read = this.get();
    if (this.pending !== before) read.catch(onFailure);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
    });
    const outcome = await Promise.race([read.catch(() => undefined), late]);
    clearTimeout(timer);
    if (outcome === 'late') onFailure();
    return this.value?.data;
  }
}
