import { Clock } from '../../src/billing/clock';
import type { TestApp } from '../harness/app';

export interface ControlledClock {
  /** Moves the app's clock forward; the wall clock keeps running underneath. */
  advance(ms: number): void;
}

/**
 * Takes over the app's `Clock` (the seam the billing caches read), so a test can step past a
 * cache window without sleeping.
 */
export function controlClock(t: TestApp): ControlledClock {
  const clock = t.app.get(Clock);
  let offset = 0;
  clock.now = () => Date.now() + offset;
  return {
    advance(ms: number) {
      offset += ms;
    },
  };
}
