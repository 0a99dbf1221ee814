/**
 * Runs at most `slots` tasks at once; the others wait their turn in arrival order (queued, never
 * refused). For work that is costly in memory per task, such as password hashing.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError('slots must be 1 or more');
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.slots) this.running++;
    else await new Promise<void>((start) => this.waiting.push(start));
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiting task, so none can overtake it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
