/** How many health probes run at once, for fleets from a handful of nodes to many thousands. */
import { HEALTH_PROBES_MAX, healthConcurrency } from './health.service';

describe('healthConcurrency', () => {
  it('is the configured number for a fleet whose slowest round fits half the period anyway', () => {
    // 300 nodes × 3 s / 50 at once = 18 s, under 30 s.
    expect(healthConcurrency(300, 3_000, 60, 50)).toBe(50);
  });

  it('never opens more probes than there are nodes', () => {
    expect(healthConcurrency(7, 3_000, 60, 50)).toBe(7);
    expect(healthConcurrency(0, 3_000, 60, 50)).toBe(1);
  });

  it('is raised so that 5,000 nodes that all time out end within half the period', () => {
    const atOnce = healthConcurrency(5_000, 3_000, 60, 50);
    expect(atOnce).toBe(500);
    // Rounds of `atOnce` probes, each waiting the whole timeout.
    expect(Math.ceil(5_000 / atOnce) * 3_000).toBeLessThanOrEqual(30_000);
  });

  it('stays within the socket bound however large the fleet', () => {
    expect(healthConcurrency(1_000_000, 3_000, 60, 50)).toBe(HEALTH_PROBES_MAX);
  });
});
