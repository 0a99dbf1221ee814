// The test run's own temporary folder: TMPDIR points into it for the run's test files and every
// process they start (os.tmpdir() reads TMPDIR on each call), and it is deleted at the end.
//
// Each jest project with tests in the run sets it up and tears it down (its global setup and
// teardown), so the projects share one folder: the first sets it up, the last deletes it.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function useRunTmpdir() {
  if (globalThis.__testRunDir) {
    globalThis.__testRunDir.users += 1;
    return;
  }
  const outerTmpdir = process.env.TMPDIR;
  const runDir = mkdtempSync(join(tmpdir(), 'vpn-service-test-'));
  // Run as root, the embedded server runs as `postgres`, which must be able to pass through.
  chmodSync(runDir, 0o711);
  process.env.TMPDIR = runDir;
  globalThis.__testRunDir = { runDir, outerTmpdir, users: 1 };
}

/**
 * Deletes the run's temporary folder, once its last user is done, and points TMPDIR back. A failed
 * global setup passes `everyone`: jest then runs no teardown at all.
 */
export function restoreTmpdir({ everyone = false } = {}) {
  const run = globalThis.__testRunDir;
  if (!run) return;
  run.users -= 1;
  if (run.users > 0 && !everyone) return;
  rmSync(run.runDir, { recursive: true, force: true });
  if (run.outerTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = run.outerTmpdir;
  globalThis.__testRunDir = undefined;
}
