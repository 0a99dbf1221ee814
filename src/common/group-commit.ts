/**
 * Hands queued items to `commit` one batch at a time: every item that arrived while the previous
 * batch ran goes into the next one, up to `maxWeight` (one item alone may weigh more). For writes
 * that would otherwise queue on the same row locks, each holding a pool connection while it
 * waits: concurrent callers share one transaction instead.
 *
 * `commit` settles each item of its batch on its own (a result per item, in order); when it
 * throws, every item of that batch fails with that error.
 */
export class GroupCommit<T, R> {
  private readonly queue: Queued<T, R>[] = [];
  private running = false;

  constructor(
    private readonly commit: (items: T[]) => Promise<PromiseSettledResult<R>[]>,
    private readonly weigh: (item: T) => number,
    private readonly maxWeight: number,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, weight: this.weigh(item), resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        let results: PromiseSettledResult<R>[];
        try {
          results = await this.commit(batch.map((queued) => queued.item));
        } catch (error) {
          results = batch.map(() => ({ status: 'rejected', reason: error }));
        }
        batch.forEach((queued, i) => {
          const result = results[i];
          if (result.status === 'fulfilled') queued.resolve(result.value);
          else queued.reject(result.reason);
        });
      }
    } finally {
      this.running = false;
    }
  }

  private take(): Queued<T, R>[] {
    let weight = this.queue[0].weight;
    let count = 1;
    while (count < this.queue.length && weight + this.queue[count].weight <= this.maxWeight) {
      weight += this.queue[count].weight;
      count++;
    }
    return this.queue.splice(0, count);
  }
}

interface Queued<T, R> {
  item: T;
  weight: number;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}
