/**
 * One value read at most once per `ttlMs`, and by one read at a time: callers during a read share
 * it. For public reads that are the same for everyone and may lag a few seconds (the leaderboard),
 * so a flood of anonymous requests costs one query per period. A failed read is not kept.
 */
export class ShortCache<T> {
  private value: { at: number; data: T } | null = null;
  private pending: Promise<T> | null = null;

  constructor(
    private readonly ttlMs: number,
    private readonly read: () => Promise<T>,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    if (this.value && this.now() - this.value.at < this.ttlMs) {
      return Promise.resolve(this.value.data);
    }
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
}
