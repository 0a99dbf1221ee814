// The test tiers of jest.config.js (unit, e2e, slow), each its own jest run one after another, then
// the time each took and the total. `npm test` runs all three; `npm run test:unit` (e2e, slow) one.
// Exits 1 when any tier failed; a failed tier does not stop the ones after it.
//
// Leading tier names choose the tiers; the other arguments go to jest (`npm test -- --ci`,
// `npm run test:e2e -- test/auth.e2e-spec.ts`). With arguments, a tier none of whose files they
// select passes.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TIERS = ['unit', 'e2e', 'slow'];
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jest = join(root, 'node_modules/jest/bin/jest.js');

const args = process.argv.slice(2);
const chosen = [];
while (TIERS.includes(args[0])) chosen.push(args.shift());
const tiers = chosen.length > 0 ? chosen : TIERS;

/** Whether the caller chose the workers (`--maxWorkers`, `-w`, `--runInBand`, `-i`). */
const workersChosen = args.some((arg) => /^(--maxWorkers|-w|--runInBand|-i)(=|$)/.test(arg));

const results = [];
for (const tier of tiers) {
  const started = performance.now();
  const jestArgs = [...args, ...(args.length > 0 ? ['--passWithNoTests'] : [])];
  // Unit files are seconds of CPU each and share nothing: both cores of a small machine, also
  // outside CI (where jest.config.js leaves half of them to other work).
  if (tier === 'unit' && !workersChosen) jestArgs.push('--maxWorkers=2');
  // `--selectProjects` last: it takes every word after it, a test path too.
  const run = spawnSync(process.execPath, [jest, ...jestArgs, '--selectProjects', tier], {
    cwd: root,
    stdio: 'inherit',
  });
  const seconds = Math.round((performance.now() - started) / 1000);
  results.push({ tier, seconds, passed: run.status === 0 });
}

const each = results.map((r) => `${r.tier}: ${r.seconds} s${r.passed ? '' : ' (failed)'}`);
const total = results.reduce((sum, r) => sum + r.seconds, 0);
console.log(`\ntest tiers: ${each.join(', ')}; total ${total} s`);
process.exit(results.every((r) => r.passed) ? 0 : 1);
