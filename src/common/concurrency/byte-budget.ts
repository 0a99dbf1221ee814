/**
 * Admits work by its size in bytes: while what was admitted and not yet released stays within
 * `capacity`, more is admitted; the rest waits in arrival order (queued, never refused). One piece
 * larger than the whole capacity is admitted alone. For bodies that cost memory while they are read,
 * parsed and wait their turn, such as nodes' traffic reports.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: { bytes: number; admit: () => void }[] = [];

  constructor(private readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError('capacity must be a whole number of bytes, 1 or more');
    }
  }

  /** Bytes admitted and not yet released. */
  get inUse(): number {
    return this.used;
  }

  /** Resolves once `bytes` are admitted, with the function that gives them back (once). */
  async acquire(bytes: number): Promise<() => void> {
    const size = Math.max(0, bytes);
    if (this.waiting.length === 0 && this.fits(size)) this.used += size;
    else await new Promise<void>((admit) => this.waiting.push({ bytes: size, admit }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= size;
      this.admitWaiting();
    };
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.capacity;
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0].bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.admit();
    }
  }
}
