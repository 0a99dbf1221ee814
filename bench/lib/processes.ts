/**
 * What the benchmarks read about processes from /proc (Linux): CPU time spent and peak resident
 * memory. The service and the reference run as child processes so that these are theirs alone.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ on Linux

/** utime, stime, cutime and cstime of a process, in microseconds; null when it is gone. */
function cpuOf(pid: number, withReapedChildren: boolean): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the parenthesised command name, which may itself contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
  const ticks = utime + stime + (withReapedChildren ? cutime + cstime : 0);
  return (ticks * 1_000_000) / TICKS_PER_S;
}

/** CPU microseconds used so far by one process. */
export function processCpuUs(pid: number): number {
  return cpuOf(pid, false) ?? 0;
}

function parentOf(pid: number): number | null {
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
 */
export function serverTreeCpuUs(postmasterPid: number): number {
  let total = cpuOf(postmasterPid, true) ?? 0;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (Number.isInteger(pid) && parentOf(pid) === postmasterPid) total += cpuOf(pid, false) ?? 0;
  }
  return total;
}

/** A process's peak resident memory so far (`VmHWM`), in MiB. */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

/** The machine's load averages (1, 5 and 15 minutes), to print beside the figures. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
