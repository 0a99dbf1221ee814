import { AppError } from '../errors';

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
 * the waiting weight past `limits.waiting` is refused at once with `limits.full()`. How long it
 * waits is bounded too: an item still queued `limits.wait.ms` after it arrived (a batch before it
 * is stuck on a lock, or on a database that does not answer) fails with `limits.wait.expired()`
 * and never reaches `run`.
 */
export class BatchQueue<T, R> {
  private readonly queue: Queued<T, R>[] = [];
  private waitingWeight = 0;
  private running = false;
  /** Fires when the oldest waiting item's time is up; armed only while items wait. */
  private expiry: NodeJS.Timeout | undefined;

  constructor(
    private readonly run: (items: T[]) => Promise<PromiseSettledResult<R>[]>,
    private readonly weigh: (item: T) => number,
    private readonly limits: {
      batch: number;
      waiting: number;
      full: () => unknown;
      wait?: { ms: number; expired: () => unknown };
    },
  ) {}

  submit(item: T): Promise<R> {
    const weight = this.weigh(item);
    if (this.queue.length > 0 && this.waitingWeight + weight > this.limits.waiting) {
      return Promise.reject(this.limits.full());
    }
    const wait = this.limits.wait;
    const deadline = wait ? performance.now() + wait.ms : Infinity;
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, weight, deadline, resolve, reject });
      this.waitingWeight += weight;
      if (!this.running) {
        this.drain().catch((error: unknown) => {
          // Only a throwing `resolve`/`reject` could get here; settle whatever still waits.
          for (const queued of this.queue.splice(0)) queued.reject(error);
          this.waitingWeight = 0;
        });
      }
      // An idle queue took the item at once; otherwise it waits, and its time counts.
      this.watchExpiry();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.dropExpired() > 0) {
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

  /** Fails the waiting items whose time is up (the oldest first); returns how many still wait. */
  private dropExpired(): number {
    const wait = this.limits.wait;
    if (!wait || this.queue.length === 0) return this.queue.length;
    const now = performance.now();
    let count = 0;
    while (count < this.queue.length && this.queue[count].deadline <= now) count++;
    if (count > 0) {
      for (const queued of this.queue.splice(0, count)) {
        this.waitingWeight -= queued.weight;
        queued.reject(wait.expired());
      }
    }
    return this.queue.length;
  }

  /** One timer for the oldest waiting item (every item waits as long, so it expires first). */
  private watchExpiry(): void {
    if (!this.limits.wait || this.expiry !== undefined || this.queue.length === 0) return;
    const delay = Math.max(0, this.queue[0].deadline - performance.now());
    this.expiry = setTimeout(() => {
      this.expiry = undefined;
      this.dropExpired();
      this.watchExpiry();
    }, delay);
    // Waiting requests keep the process alive; the timer alone should not.
    this.expiry.unref();
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
  /** `performance.now()` past which the item no longer waits. */
  deadline: number;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}

/**
 * `limits.full` (and `limits.wait.expired`) for a queue in front of the database: 503
 * `UPSTREAM_UNAVAILABLE` with `Retry-After`, so that a stalled database cannot make the queue, and
 * the process, grow without end, nor hold a request past its time.
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
 * message of the 503 when too many wait; an item waits at most `maxWaitMs` (DB_POOL_WAIT_MS, as
 * it would for a pool connection) before it is answered 503.
 */
export function sharedStatement<T, R>(
  read: (items: T[]) => Promise<R[]>,
  busy: string,
  maxWaitMs: number,
): BatchQueue<T, R> {
  return new BatchQueue<T, R>(
    async (items) => (await read(items)).map((value) => ({ status: 'fulfilled', value })),
    () => 1,
    {
      batch: SHARED_BATCH,
      waiting: SHARED_WAITING,
      full: refuseWhenFull(busy),
      wait: databaseWait(maxWaitMs),
    },
  );
}

/** `limits.wait` for a queue in front of the database: as long as a query waits for a connection. */
export const databaseWait = (ms: number): { ms: number; expired: () => unknown } => ({
  ms,
  expired: refuseWhenFull(`no answer from the database within ${ms} ms, retry shortly`),
});
