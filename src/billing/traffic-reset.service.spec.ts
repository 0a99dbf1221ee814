import { SWEEP_SETTLE_MS, sweepDue } from './traffic-reset.service';

describe('sweepDue: when the reset job reads users for resets due at a midnight', () => {
  const midnight = Date.UTC(2026, 10, 30);
  const at = (ms: number) => new Date(midnight + ms);
  const minute = 60_000;

  it('reads them the first time, and when the last read is ahead of the clock', () => {
    expect(sweepDue(at(minute), null)).toBe(true);
    expect(sweepDue(at(minute), at(2 * minute))).toBe(true);
  });

  it('reads them once after each midnight, then once more after SWEEP_SETTLE_MS, then not', () => {
    // Last read the evening before.
    expect(sweepDue(at(minute), at(-minute))).toBe(true);
    // Read just after midnight: not again until SWEEP_SETTLE_MS after it.
    expect(sweepDue(at(2 * minute), at(minute))).toBe(false);
    expect(sweepDue(at(SWEEP_SETTLE_MS - 1), at(minute))).toBe(false);
    expect(sweepDue(at(SWEEP_SETTLE_MS), at(minute))).toBe(true);
    // Read after SWEEP_SETTLE_MS: not until the next midnight.
    expect(sweepDue(at(SWEEP_SETTLE_MS + minute), at(SWEEP_SETTLE_MS))).toBe(false);
    expect(sweepDue(at(23 * 60 * minute), at(SWEEP_SETTLE_MS))).toBe(false);
    expect(sweepDue(at(24 * 60 * minute), at(SWEEP_SETTLE_MS))).toBe(true);
  });

  it("a first read after SWEEP_SETTLE_MS is the night's last", () => {
    expect(sweepDue(at(SWEEP_SETTLE_MS + 2 * minute), at(SWEEP_SETTLE_MS + minute))).toBe(false);
  });
});
