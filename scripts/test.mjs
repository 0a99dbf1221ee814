// The test tiers of jest.config.js (unit, e2e, slow). `npm test` runs the unit tier alone first
// (seconds, no database: a broken unit fails fast), then the e2e and slow tiers in one jest run, so
// that their files share the workers and a long slow file does not leave a worker idle at the end of
// a tier of its own. After each run it prints each tier's files, the span from its first file's
// start to its last one's end and its files' time added up (scripts/tier-times-reporter.cjs), and
// then the wall time of each run and the total. `npm run test:unit` (e2e, slow) runs one tier.
// Exits 1 when any run failed; a failed run does not stop the one after it.
//
// Leading tier names choose the tiers, run together in one jest run; the other arguments go to
// jest (`npm test -- --ci`, `npm run test:e2e -- test/auth.e2e-spec.ts`). With arguments, a tier
// none of whose files they select passes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TIERS = ['unit', 'e2e', 'slow'];
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jest = join(root, 'node_modules/jest/bin/jest.js');

const args = process.argv.slice(2);
const chosen = [];
while (TIERS.includes(args[0])) chosen.push(args.shift());
const runs = chosen.length > 0 ? [chosen] : [['unit'], ['e2e', 'slow']];

/** Whether the caller chose the workers (`--maxWorkers`, `-w`, `--runInBand`, `-i`). */
const workersChosen = args.some((arg) => /^(--maxWorkers|-w|--runInBand|-i)(=|$)/.test(arg));
/** Whether the caller chose the reporters; then the tiers' times are not printed. */
const reportersChosen = args.some((arg) => /^--reporters(=|$)/.test(arg));

const timesDir = mkdtempSync(join(tmpdir(), 'test-tiers-'));
const results = [];
try {
  for (const [index, tiers] of runs.entries()) {
    const started = performance.now();
    const timesFile = join(timesDir, `${index}.json`);
    const jestArgs = [...args, ...(args.length > 0 ? ['--passWithNoTests'] : [])];
    // Unit files are seconds of CPU each and share nothing: both cores of a small machine, also
    // outside CI (where jest.config.js leaves half of them to other work).
    if (tiers.length === 1 && tiers[0] === 'unit' && !workersChosen)
      jestArgs.push('--maxWorkers=2');
    if (!reportersChosen) {
      jestArgs.push(
        '--reporters=default',
        `--reporters=${join(root, 'scripts/tier-times-reporter.cjs')}`,
      );
    }
    // `--selectProjects` last: it takes every word after it, a test path too.
    const run = spawnSync(process.execPath, [jest, ...jestArgs, '--selectProjects', ...tiers], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, TIER_TIMES_FILE: timesFile },
    });
    const seconds = Math.round((performance.now() - started) / 1000);
    let tierTimes = [];
    try {
      tierTimes = JSON.parse(readFileSync(timesFile, 'utf8'));
    } catch {
      // No file: jest stopped before running a test, or the caller chose the reporters.
    }
    results.push({ tiers, seconds, passed: run.status === 0, tierTimes });
  }
} finally {
  rmSync(timesDir, { recursive: true, force: true });
}

for (const { tierTimes } of results) {
  for (const tier of tierTimes) {
    console.log(
      `${tier.name}: ${tier.files} files, from the first one's start to the last one's end ` +
        `${tier.spanSeconds} s, their times added up ${tier.fileSeconds} s`,
    );
  }
}
const each = results.map(
  (r) => `${r.tiers.join(' + ')}: ${r.seconds} s${r.passed ? '' : ' (failed)'}`,
);
const total = results.reduce((sum, r) => sum + r.seconds, 0);
console.log(`\ntest runs: ${each.join(', ')}; total ${total} s`);
process.exit(results.every((r) => r.passed) ? 0 : 1);
