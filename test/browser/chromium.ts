import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

// The package's CommonJS build, unpacked by a child process (unpackedChromium).
const requireHere = createRequire(__filename);

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * Flags for a headless Chromium on a machine with a closed network. Not @sparticuz/chromium's own
 * list: that one turns off web security, and the test is about CORS and the origin check.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Debian's Chromium when it is installed; otherwise the build that @sparticuz/chromium ships inside
 * its npm package, unpacked once into the user's cache folder, so `npm ci && npm test` needs no
 * browser on the machine.
 */
export async function chromiumExecutable(): Promise<string> {
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  return unpackedChromium();
}

/**
 * The package unpacks into `<temporary folder>/chromium`, a fixed path that one user's run would
 * leave closed to every other user. Here it unpacks into a fresh folder (its TMPDIR) that is then
 * renamed into the user's cache, `~/.cache/vpn-service/chromium-<version>`; a
 * run racing another keeps whichever rename won.
 */
async function unpackedChromium(): Promise<string> {
  const packageEntry = requireHere.resolve('@sparticuz/chromium');
  const packageFile = join(dirname(packageEntry), '../../package.json');
  const { version } = JSON.parse(readFileSync(packageFile, 'utf8')) as { version: string };
  const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'vpn-service');
  const target = join(cache, `chromium-${version}`);
  const executable = join(target, 'chromium');
  if (existsSync(executable)) return executable;

  mkdirSync(cache, { recursive: true, mode: 0o700 });
  const staging = mkdtempSync(join(cache, '.chromium-'));
  // In a process of its own: the package reads os.tmpdir(), which a test cannot redirect (jest
  // hands a test a copy of process.env).
  const unpack = `require(${JSON.stringify(packageEntry)}).executablePath()`;
  try {
    await promisify(execFile)(process.execPath, ['-e', unpack], {
      env: { ...process.env, TMPDIR: staging },
    });
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  try {
    renameSync(staging, target);
  } catch {
    // Another run put its copy there first.
    rmSync(staging, { recursive: true, force: true });
  }
  return executable;
}
