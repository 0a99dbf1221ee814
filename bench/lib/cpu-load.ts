/**
 * Load (see load.ts) with the CPU that the server and PostgreSQL spent per answered request
 * meanwhile, read from /proc.
 */
import { figuresOf, load, type Figures as LoadFigures } from './load';
import { processCpuUs, serverTreeCpuUs } from './processes';

export interface Target {
  url: string;
  headers?: Record<string, string>;
}

export interface Figures extends LoadFigures {
  /** CPU microseconds per answered request. */
  serverCpuUs: number;
  postgresCpuUs: number;
}

/** A 2 s warm-up (JIT, connection pools) and then `seconds` of load at `connections`. */
export async function measureWithCpu(
  target: Target,
  options: { seconds: number; connections: number; serverPid: number; postmasterPid: number },
): Promise<Figures> {
  const config = { ...target, connections: options.connections };
  await load({ ...config, durationS: 2 });
  const server = processCpuUs(options.serverPid);
  const postgres = serverTreeCpuUs(options.postmasterPid);
  const result = await load({ ...config, durationS: options.seconds });
  const requests = Math.max(1, result.requests.total);
  return {
    ...figuresOf(result),
    serverCpuUs: (processCpuUs(options.serverPid) - server) / requests,
    postgresCpuUs: (serverTreeCpuUs(options.postmasterPid) - postgres) / requests,
  };
}

export function row(name: string, figures: Figures): string {
  const us = (value: number) => value.toFixed(0);
  return `| ${name} | ${figures.rps.toFixed(0)} | ${figures.p50} | ${figures.p99} | ${us(figures.serverCpuUs)} | ${us(figures.postgresCpuUs)} | ${figures.errors} |`;
}

export const TABLE_HEAD = [
  '| server | req/s | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req | errors |',
  '|---|--:|--:|--:|--:|--:|--:|',
];
