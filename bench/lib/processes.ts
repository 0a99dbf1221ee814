/**
 * What the benchmarks read about processes from /proc (Linux): CPU time spent and peak resident
 * memory. The service and the reference run as child processes so that these are theirs alone.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ on Linux

/**
 * utime, stime, cutime and cstime of a process (`/proc/<pid>/stat`) or of one of its threads
 * (`/proc/<pid>/task/<tid>/stat`), in microseconds; null when it is gone.
 */
function cpuOf(
  pid: number,
  withReapedChildren: boolean,
  statFile = `/proc/${pid}/stat`,
): number | null {
  let stat: string;
  try {
    stat = readFileSync(statFile, 'utf8');
  } catch {
    return null;
  }
  // Fields after the parenthesised command name, which may itself contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
  const ticks = utime + stime + (withReapedChildren ? cutime + cstime : 0);
  return (ticks * 1_000_000) / TICKS_PER_S;
}

/**
 * CPU microseconds used so far by a process and its live descendants (the node agent's workers,
 * anything a service starts).
 */
export function processCpuUs(pid: number): number {
  return processTree(pid).reduce((sum, each) => sum + (cpuOf(each, false) ?? 0), 0);
}

/**
 * CPU microseconds used so far by a process's main thread, which in a Node.js process runs the
 * event loop, and so every request's JavaScript; NaN once it is gone. The rest of the process's
 * CPU (`processCpuUs`) is its helper threads' (V8's garbage collection and compilers, libuv's
 * pool): work that keeps the other core busy but does not hold the event loop up.
 */
export function eventLoopCpuUs(pid: number): number {
  return cpuOf(pid, false, `/proc/${pid}/task/${pid}/stat`) ?? NaN;
}

export function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/**
 * CPU microseconds used so far by a PostgreSQL server: the postmaster, its live children
 * (backends, walwriter, …) and the children it already reaped (backends of closed connections).
 * NaN for a server that is not on this machine (`postmasterPid` 0).
 */
export function serverTreeCpuUs(postmasterPid: number): number {
  if (postmasterPid === 0) return NaN;
  let total = cpuOf(postmasterPid, true) ?? 0;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (Number.isInteger(pid) && parentOf(pid) === postmasterPid) total += cpuOf(pid, false) ?? 0;
  }
  return total;
}

/** `pid` and its live descendants, parents first. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const each = Number(entry);
    const parent = Number.isInteger(each) ? parentOf(each) : null;
    if (parent !== null) parents.set(each, parent);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}

function statusKiB(pid: number, field: string): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
}

/**
 * The resident memory of the service's process tree, in MiB: the sum of `VmHWM` (each process's
 * peak so far) or `VmRSS` (now) over `pid` and its live descendants. Summed peaks may come from
 * different moments, so for more than one process this is an upper bound of the tree's peak;
 * for one process it is exact. A file page shared by two processes counts twice.
 */
export function serviceMemoryMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  return processTree(pid).reduce((sum, each) => sum + statusKiB(each, field), 0) / 1024;
}

/** The service's peak resident memory so far, in MiB (see `serviceMemoryMiB`). */
export const peakRssMiB = (pid: number): number => serviceMemoryMiB(pid, 'VmHWM');

/** The machine's load averages (1, 5 and 15 minutes), to print beside the figures. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
