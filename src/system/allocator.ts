import { spawn } from 'node:child_process';

/**
 * glibc's malloc settings the service runs with. `M_MMAP_THRESHOLD` pinned at glibc's default
 * (128 KiB): left dynamic, glibc raises the threshold to the size of each large block freed (up to
 * 32 MiB), so after the first argon2 run (19 MiB) or 4 MB traffic report every later one is carved
 * from a thread's arena and kept there instead of going back to the system (about 60 MiB more
 * resident after a burst of staff logins; bench/RESULTS.md). glibc reads these only at process
 * start, from the environment.
 */
export const ALLOCATOR_ENVIRONMENT = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;

/**
 * V8's young generation bounded at 8 MiB a semi-space (Node 20's default is 16): under load every
 * request waiting on the database keeps its objects there, and the young generation grows to its
 * bound, about 20 MiB more resident at the default (bench:memory: 243 MiB peak before, 222 MiB
 * after; bench/RESULTS.md, 2026-11-26). V8 reads it only at start, from the command line or
 * NODE_OPTIONS; an operator's own `--max-semi-space-size` there is kept.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=8';

function hasSemiSpaceFlag(): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some((arg) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(arg));
}

function usesGlibc(): boolean {
  if (process.platform !== 'linux') return false;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } })
    ?.header;
  return typeof header?.glibcVersionRuntime === 'string';
}

/**
 * Runs the service in a child process started with `ALLOCATOR_ENVIRONMENT` and
 * `YOUNG_GENERATION_FLAG`, unless this process already has both (or runs on another C library, or
 * a one-off command): `node dist/main.js` then needs no variable or flag the operator must remember. This process stays as a small launcher (about
 * 7 MiB of its own; the code pages are the child's, shared): it passes SIGTERM, SIGINT and SIGHUP
 * on and exits with the child's code. The child stops when the launcher goes away (an IPC channel).
 * Returns false when the service should run here instead (always for a one-off command, `oneOff`).
 */
export function relaunchWithAllocatorSettings(oneOff: boolean): boolean {
  const missing = Object.entries(ALLOCATOR_ENVIRONMENT).filter(
    ([name]) => process.env[name] === undefined,
  );
  const flags = hasSemiSpaceFlag() ? [] : [YOUNG_GENERATION_FLAG];
  if ((missing.length === 0 && flags.length === 0) || oneOff || !usesGlibc()) return false;

  const child = spawn(process.execPath, [...flags, ...process.execArgv, ...process.argv.slice(1)], {
    env: { ...process.env, ...Object.fromEntries(missing) },
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    // A process group of its own: a terminal's Ctrl-C reaches the launcher alone, which passes it
    // on once (a second signal stops the service at once).
    detached: true,
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  child.once('error', (error) => {
    console.error('could not start the service:', error.message);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    process.exit(code ?? (signal ? 128 + signalNumber(signal) : 1));
  });
  return true;
}

function signalNumber(signal: NodeJS.Signals): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}

/**
 * In the child of `relaunchWithAllocatorSettings`: calls `stop` when the launcher is gone (killed
 * without a chance to pass a signal on), so the service never outlives it. The channel does not
 * keep the process alive.
 */
export function stopWithLauncher(stop: () => void): void {
  if (!process.channel) return;
  process.channel.unref();
  process.once('disconnect', stop);
}
