/**
 * `npm start`'s build: runs `npm run build` unless nothing it reads changed since the last build
 * this way, so a second start begins at once. "Changed" is a file's or folder's modification time
 * (a folder's changes when a file in it is added, removed or renamed) at or after the moment the
 * last build began; a clean clone has no record and builds. Run from the repository's root.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What the build reads. */
const INPUTS = [
  'src',
  'migrations',
  'agent/src',
  'client/src',
  'web/src',
  'web/index.html',
  'web/vite.config.mts',
  'package.json',
  'package-lock.json',
  'nest-cli.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.migrations.json',
  'scripts/web-compress.mjs',
  'scripts/web-budget.mjs',
  'scripts/build-if-changed.mjs',
];
/** What it writes; one missing (a `git clean`, a failed build) means build again. */
const OUTPUTS = ['dist/main.js', 'agent/dist/agent.js', 'web/dist/index.html'];
/** When the last completed build began, in ms since the epoch. */
const RECORD = 'dist/.build-started';

/** The newest modification time under `path` (folders included), or 0 when it does not exist. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce(
    (latest, name) => Math.max(latest, newest(join(path, name))),
    stat.mtimeMs,
  );
}

function lastBuildStarted() {
  try {
    const started = Number(readFileSync(RECORD, 'utf8'));
    return Number.isFinite(started) ? started : null;
  } catch {
    return null;
  }
}

const started = lastBuildStarted();
const fresh =
  started !== null &&
  OUTPUTS.every((output) => existsSync(output)) &&
  INPUTS.every((input) => newest(input) < started);

if (fresh) {
  console.log('Nothing changed since the last build: starting it as it is.');
} else {
  // A little early: file times come from the kernel's coarse clock (a few ms behind Date.now()),
  // and a file saved as the build began may have been read before or after the save.
  const beginning = Date.now() - 100;
  const build = spawnSync('npm', ['run', 'build', '--silent'], {
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
  mkdirSync(dirname(RECORD), { recursive: true });
  writeFileSync(RECORD, String(beginning));
}
