import { Injectable } from '@nestjs/common';
import { deleteInBatches } from '../../scheduler/delete-in-batches';
import { ThrottleHitsRepository } from './throttle-hits.repository';

/** Rows deleted per statement: short statements keep row locks and WAL bursts small. */
export const THROTTLE_CLEANUP_BATCH = 1_000;
/** Batches per run, so one run stays bounded even after a flood of made-up keys. */
export const THROTTLE_CLEANUP_MAX_BATCHES = 100;

/** Deletes throttle rows whose window and block are over, in batches (part of the clean-up job). */
@Injectable()
export class ThrottleCleanup {
  constructor(private readonly hits: ThrottleHitsRepository) {}

  /** Returns how many rows it deleted. */
  run(signal?: AbortSignal): Promise<number> {
    return deleteInBatches((batch) => this.hits.deleteExpired(batch), {
      batch: THROTTLE_CLEANUP_BATCH,
      maxBatches: THROTTLE_CLEANUP_MAX_BATCHES,
      signal,
    });
  }
}
