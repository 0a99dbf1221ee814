import { setTimeout as sleep } from 'node:timers/promises';

/** Rows deleted per statement: short statements keep locks and WAL bursts small. */
export const CLEANUP_BATCH = 5_000;
/** Statements per table and run, so one run stays bounded after a flood; the next run goes on. */
export const CLEANUP_MAX_BATCHES = 20;

/** `deleteInBatches` with the clean-up's usual batch and bound. */
export function cleanUpInBatches(
  deleteBatch: (batch: number) => Promise<number>,
  signal?: AbortSignal,
): Promise<number> {
  return deleteInBatches(deleteBatch, {
    batch: CLEANUP_BATCH,
    maxBatches: CLEANUP_MAX_BATCHES,
    signal,
  });
}

/**
 * How every clean-up deletes: `deleteBatch` deletes up to `batch` rows per statement (short
 * statements keep row locks and WAL bursts small) and says how many, until one comes back short,
 * `maxBatches` ran, or the job is told to stop. Between two statements it rests as long as the
 * last one took, so a clean-up after a busy minute takes at most half of PostgreSQL's time while
 * it runs, not a whole core in one burst that every request waits behind. Returns how many rows
 * it deleted.
 */
export async function deleteInBatches(
  deleteBatch: (batch: number) => Promise<number>,
  options: { batch: number; maxBatches?: number; signal?: AbortSignal },
): Promise<number> {
  const { signal } = options;
  let deleted = 0;
  let lastMs = 0;
  for (let n = 0; n < (options.maxBatches ?? Infinity) && !signal?.aborted; n++) {
    if (n > 0 && !(await rest(lastMs, signal))) break;
    const started = performance.now();
    const count = await deleteBatch(options.batch);
    lastMs = performance.now() - started;
    deleted += count;
    if (count < options.batch) break;
  }
  return deleted;
}

/** Waits `ms`; false when `signal` aborted the wait (the job is told to stop). */
async function rest(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch (error) {
    if (signal?.aborted) return false;
    throw error;
  }
}
