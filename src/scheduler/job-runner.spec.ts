import { JOBS } from './intervals';
import { tickPhase } from './job-runner.service';

describe('tickPhase', () => {
  /** The phases of the first `count` jobs, in the order they fall in the period. */
  const phases = (count: number): number[] =>
    Array.from({ length: count }, (_, index) => tickPhase(index)).sort((a, b) => a - b);

  it('gives every job of an instance its own moment of the period, none at its start', () => {
    for (const count of [1, 2, 5, Object.keys(JOBS).length, 30]) {
      const sorted = phases(count);
      expect(sorted[0]).toBeGreaterThan(0);
      expect(sorted[count - 1]).toBeLessThan(1);
      // However many jobs, no two closer than a third of an even spread's gap.
      const gaps = sorted.slice(1).map((phase, i) => phase - sorted[i]);
      expect(Math.min(...gaps, 1)).toBeGreaterThan(1 / (3 * count));
    }
  });

  it('spreads the periodic jobs of a minute over the minute', () => {
    // With the jobs there are now, at a 60-second period: none within 2 s of another.
    const seconds = phases(Object.keys(JOBS).length).map((phase) => phase * 60);
    const gaps = seconds.slice(1).map((second, i) => second - seconds[i]);
    expect(Math.min(...gaps)).toBeGreaterThan(2);
  });
});
