// The service compiled once for a test run, for the tests that start it as a process of its own:
// through ts-node each of those processes transpiled `src/` again (4.3 s of CPU to load the app
// module), compiled it starts in about a second. Emitted without type checking (`tsc --noCheck`:
// the type check is `npm run typecheck`'s), as `npm run build` lays out `dist/` (the compiled
// `src/`, `migrations/` beside it, the bot's locale files), into a folder of the repository's
// root, so that paths the code finds from its own folder (`web/dist`, `deploy/`) lead where they
// do from `dist/`. global-setup.mjs builds it and global-teardown.mjs deletes it.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** Where a run's build lies: `.test-build-<random>/` at the root (git and the linters skip it). */
export const SERVICE_BUILD_PREFIX = join(ROOT, '.test-build-');

/** Compiles the service into a new folder; its path. */
export function buildService() {
  const dir = mkdtempSync(SERVICE_BUILD_PREFIX);
  try {
    for (const project of ['tsconfig.build.json', 'tsconfig.migrations.json']) {
      const run = spawnSync(
        process.execPath,
        [TSC, '-p', project, '--noCheck', '--sourceMap', 'false', '--outDir', dir],
        { cwd: ROOT, encoding: 'utf8' },
      );
      if (run.status !== 0) {
        throw new Error(`compiling the service (${project}) failed:\n${run.stdout}${run.stderr}`);
      }
    }
    cpSync(join(ROOT, 'src', 'bot', 'locales'), join(dir, 'bot', 'locales'), { recursive: true });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return dir;
}

export function removeServiceBuild(dir) {
  if (dir?.startsWith(SERVICE_BUILD_PREFIX)) rmSync(dir, { recursive: true, force: true });
}
