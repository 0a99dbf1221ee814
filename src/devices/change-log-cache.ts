/** A change of the credentials log as the cache keeps it: its version and its user's bucket. */
export interface LoggedChange {
  version: number;
  bucket: number;
}

/** Reads the log's changes numbered in `(after, upTo]`, in ascending versions. */
export type ChangeLogReader = (after: number, upTo: number) => Promise<LoggedChange[]>;

/** The cache holds at most this many changes; a larger gap starts it afresh. */
const MAX_CHANGES = 20_000;

/**
 * The buckets of the credentials log's latest changes, as far as this instance has read them, so
 * that a node's poll learns that nothing changed for it without a statement of its own: each
 * node polls once a minute, and the log moves for every node's users together, so that most polls
 * read the log only to find nothing in their node's buckets.
 *
 * What it holds stays true: a change numbered up to a version read from the counter has committed
 * (migration 0021), and the log is only ever added to (the clean-up deletes old changes, and moves
 * the version from which nodes must take their whole set past them). Each instance reads the log
 * once for all its polls, as the counter moves; a poll older than what it holds, or a gap wider
 * than MAX_CHANGES, is answered "may concern", and the caller reads the log itself.
 */
export class ChangeLogCache {
  private versions: number[] = [];
  private buckets: number[] = [];
  /** What is held: every change numbered in `(from, upTo]`; -1 before the first read. */
  private from = -1;
  private upTo = -1;
  private extending: Promise<void> | null = null;

  constructor(
    private readonly read: ChangeLogReader,
    private readonly maxChanges = MAX_CHANGES,
  ) {}

  /**
   * Whether any change numbered in `(since, version]` may concern a node of `buckets` (ascending;
   * null: every bucket). `version` is the counter as read a moment ago. False only when none does.
   */
  async mayConcern(
    since: number,
    version: number,
    buckets: readonly number[] | null,
  ): Promise<boolean> {
    if (version <= since) return false;
    await this.cover(version);
    if (since < this.from) return true;
    let i = firstAbove(this.versions, since);
    for (; i < this.versions.length && this.versions[i] <= version; i++) {
      if (buckets === null || includes(buckets, this.buckets[i])) return true;
    }
    return false;
  }

  /** Reads the log up to `version`, one read at a time for all the polls that wait on it. */
  private async cover(version: number): Promise<void> {
    while (this.upTo < version) {
      this.extending ??= this.extend(version).finally(() => {
        this.extending = null;
      });
      await this.extending;
    }
  }

  private async extend(version: number): Promise<void> {
    const after = this.upTo;
    if (after < 0 || version - after > this.maxChanges) {
      // The first poll, or too much to hold: from here on.
      this.versions = [];
      this.buckets = [];
      this.from = this.upTo = version;
      return;
    }
    for (const change of await this.read(after, version)) {
      this.versions.push(change.version);
      this.buckets.push(change.bucket);
    }
    this.upTo = version;
    if (this.versions.length > this.maxChanges) {
      const cut = this.versions.length >> 1;
      this.from = this.versions[cut - 1];
      this.versions.splice(0, cut);
      this.buckets.splice(0, cut);
    }
  }
}

/** The index of the first of `sorted` (ascending) above `value`. */
function firstAbove(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle] <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Whether `sorted` (ascending) holds `value`. */
function includes(sorted: readonly number[], value: number): boolean {
  const at = firstAbove(sorted, value - 1);
  return at < sorted.length && sorted[at] === value;
}
