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
 * `maxBatches` ran, or the job is told to stop. Returns how many rows it deleted.
 */
export async function deleteInBatches(
  deleteBatch: (batch: number) => Promise<number>,
  options: { batch: number; maxBatches?: number; signal?: AbortSignal },
): Promise<number> {
  let deleted = 0;
  for (let n = 0; n < (options.maxBatches ?? Infinity) && !options.signal?.aborted; n++) {
    const count = await deleteBatch(options.batch);
    deleted += count;
    if (count < options.batch) break;
  }
  return deleted;
}
