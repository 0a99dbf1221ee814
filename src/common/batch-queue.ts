import { AppError } from './errors';

/**
 * Hands queued items to `run` one batch at a time: every item that arrived while the previous
 * batch ran goes into the next one, up to `limits.batch` in weight (one item alone may weigh
 * more). For a statement that concurrent requests would each run on their own: one statement
 * serves the whole batch. A write whose callers would otherwise queue on the same row locks, each
 * holding a pool connection while it waits, shares one transaction; a small read that every
 * request makes costs one round trip per batch instead of one per request. The first item of an
 * idle queue starts at once, so batching adds no wait when there is no load.
 *
 * `run` settles each item of its batch on its own (a result per item, in order); when it throws,
 * every item of that batch fails with that error. What waits is bounded: an item that would take
 * the waiting weight past `limits.waiting` is refused at once with `limits.full()`.
 */
export class BatchQueue<T, R> {
  private readonly queue: Queued<T, R>[] = [];
  private waitingWeight = 0;
  private running = false;

  constructor(
    private readonly run: (items: T[]) => Promise<PromiseSettledResult<R>[]>,
    private readonly weigh: (item: T) => number,
    private readonly limits: { batch: number; waiting: number; full: () => unknown },
  ) {}

  submit(item: T): Promise<R> {
    const weight = this.weigh(item);
    if (this.queue.length > 0 && this.waitingWeight + weight > this.limits.waiting) {
      return Promise.reject(this.limits.full());
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, weight, resolve, reject });
      this.waitingWeight += weight;
      if (!this.running) {
        this.drain().catch((error: unknown) => {
          // Only a throwing `resolve`/`reject` could get here; settle whatever still waits.
          for (const queued of this.queue.splice(0)) queued.reject(error);
          this.waitingWeight = 0;
        });
      }
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        let results: PromiseSettledResult<R>[];
        try {
          results = await this.run(batch.map((queued) => queued.item));
        } catch (error) {
          results = batch.map(() => ({ status: 'rejected', reason: error }));
        }
        if (results.length !== batch.length) {
          const reason = new Error(`run settled ${results.length} of ${batch.length} items`);
          results = batch.map(() => ({ status: 'rejected', reason }));
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
    while (count < this.queue.length && weight + this.queue[count].weight <= this.limits.batch) {
      weight += this.queue[count].weight;
      count++;
    }
    this.waitingWeight -= weight;
    return this.queue.splice(0, count);
  }
}

interface Queued<T, R> {
  item: T;
  weight: number;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}

/**
 * `limits.full` for a queue in front of the database: 503 `UPSTREAM_UNAVAILABLE` with
 * `Retry-After`, so that a stalled database cannot make the queue, and the process, grow without end.
 */
export const refuseWhenFull =
  (message: string, retryAfterS = 1): (() => AppError) =>
  () =>
    new AppError('UPSTREAM_UNAVAILABLE', message, [], { 'Retry-After': String(retryAfterS) });

/** Items one shared statement serves at most (their ids go in one array parameter). */
const SHARED_BATCH = 500;
/** Items waiting for a shared statement at most; more are refused at once (503). */
const SHARED_WAITING = 20_000;

/**
 * A queue in front of a statement that every request would otherwise run alone: `read(items)`
 * runs it once for a batch and answers each item, in order. Each item weighs one; `busy` is the
 * message of the 503 when too many wait.
 */
export function sharedStatement<T, R>(
  read: (items: T[]) => Promise<R[]>,
  busy: string,
): BatchQueue<T, R> {
  return new BatchQueue<T, R>(
    async (items) => (await read(items)).map((value) => ({ status: 'fulfilled', value })),
    () => 1,
    { batch: SHARED_BATCH, waiting: SHARED_WAITING, full: refuseWhenFull(busy) },
  );
}
