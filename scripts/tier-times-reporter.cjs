// A jest reporter beside the default one (scripts/test.mjs adds it): when the run ends, writes to
// the file named by TIER_TIMES_FILE, for each tier (jest project) of the run, how many test files
// it ran, the seconds from its first file's start to its last file's end, and the seconds its
// files took added up. Tiers that run together share the workers, so their spans overlap.
const { writeFileSync } = require('node:fs');

class TierTimesReporter {
  constructor() {
    this.tiers = new Map();
  }

  onTestResult(test, result) {
    const name = test.context.config.displayName?.name ?? 'default';
    const tier = this.tiers.get(name) ?? { files: 0, start: Infinity, end: 0, fileSeconds: 0 };
    const { start, end } = result.perfStats;
    tier.files += 1;
    tier.start = Math.min(tier.start, start);
    tier.end = Math.max(tier.end, end);
    tier.fileSeconds += (end - start) / 1000;
    this.tiers.set(name, tier);
  }

  onRunComplete() {
    const file = process.env.TIER_TIMES_FILE;
    if (!file) return;
    const tiers = [...this.tiers].map(([name, tier]) => ({
      name,
      files: tier.files,
      spanSeconds: Math.round((tier.end - tier.start) / 1000),
      fileSeconds: Math.round(tier.fileSeconds),
    }));
    writeFileSync(file, JSON.stringify(tiers));
  }
}

module.exports = TierTimesReporter;
