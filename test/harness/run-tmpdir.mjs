// The test run's own temporary folder: TMPDIR points into it for the run's test files and every
// process they start (os.tmpdir() reads TMPDIR on each call), and it is deleted at the end.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function useRunTmpdir() {
  const outerTmpdir = process.env.TMPDIR;
  const runDir = mkdtempSync(join(tmpdir(), 'vpn-service-test-'));
  // Run as root, the embedded server runs as `postgres`, which must be able to pass through.
  chmodSync(runDir, 0o711);
  process.env.TMPDIR = runDir;
  globalThis.__testRunDir = { runDir, outerTmpdir };
}

/** Deletes the run's temporary folder and points TMPDIR back where it was. */
export function restoreTmpdir() {
  const run = globalThis.__testRunDir;
  if (!run) return;
  rmSync(run.runDir, { recursive: true, force: true });
  if (run.outerTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = run.outerTmpdir;
  globalThis.__testRunDir = undefined;
}
