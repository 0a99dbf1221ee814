import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** What the built app depends on: its sources, the client, the game rules, the dependencies. */
const INPUTS = [
  'web/src',
  'web/index.html',
  'web/vite.config.mts',
  'client/src',
  'src/game/samegame.ts',
  'src/auth/guards/role-sets.ts',
  'package-lock.json',
  'scripts/web-compress.mjs',
  'test/browser/web-build.ts',
];

function filesOf(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesOf(join(path, name)));
}

/**
 * Builds the web app as `npm run build` does, into a folder of the temporary directory named by a
 * hash of its inputs, and returns that folder. Test files that need the app share one build; a
 * change to any input makes a new one. Two files building at once both build, and the first to
 * finish keeps its folder.
 */
export function buildWebApp(): string {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => filesOf(join(ROOT, input)))) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  const dir = join(tmpdir(), `vpn-web-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(join(dir, 'index.html'))) return dir;
  const staging = mkdtempSync(join(tmpdir(), 'vpn-web-build-'));
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      'web/vite.config.mts',
      '--logLevel',
      'warn',
    ],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production', WEB_OUT_DIR: staging },
      stdio: 'pipe',
    },
  );
  // Its compressed copies too, which the service sends by Accept-Encoding.
  execFileSync(process.execPath, [join(ROOT, 'scripts/web-compress.mjs'), staging], {
    stdio: 'pipe',
  });
  try {
    renameSync(staging, dir);
  } catch {
    // Another test file finished the same build first: use its folder.
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}
