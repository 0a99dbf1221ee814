/**
 * Load (see load.ts) with the CPU that the server and PostgreSQL spent per answered request
 * meanwhile, read from /proc.
 */
import type { Fixture } from './fixture';
import { BENCH, figuresOf, load, median, type Figures as LoadFigures } from './load';
import { processCpuUs, serverTreeCpuUs } from './processes';

export interface Target {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** One JSON body per line; each request sends the next. */
  bodiesFile?: string;
}

export interface Figures extends LoadFigures {
  /** Request bodies sent from the target's `bodiesFile` (0 without one). */
  bodiesUsed: number;
  /** CPU microseconds per answered request. */
  serverCpuUs: number;
  postgresCpuUs: number;
}

/**
 * A 2 s warm-up (JIT, connection pools) and then `seconds` of load at `connections`. The warm-up
 * sends `warmUp` when given: bodies that may be used once (one-time tokens) need a file of their own.
 */
export async function measureWithCpu(
  target: Target,
  options: {
    seconds: number;
    connections: number;
    serverPid: number;
    postmasterPid: number;
    warmUp?: Target;
  },
): Promise<Figures> {
  const config = { ...target, connections: options.connections };
  await load({ ...(options.warmUp ?? target), connections: options.connections, durationS: 2 });
  const server = processCpuUs(options.serverPid);
  const postgres = serverTreeCpuUs(options.postmasterPid);
  const result = await load({ ...config, durationS: options.seconds });
  const requests = Math.max(1, result.requests.total);
  return {
    ...figuresOf(result),
    bodiesUsed: (result as { bodiesUsed?: number }).bodiesUsed ?? 0,
    serverCpuUs: (processCpuUs(options.serverPid) - server) / requests,
    postgresCpuUs: (serverTreeCpuUs(options.postmasterPid) - postgres) / requests,
  };
}

/** What one round of the service sends: its target and, when bodies are single-use, its warm-up. */
export interface ServiceRound {
  target: Target;
  warmUp?: Target;
}

/**
 * BENCH_ROUNDS rounds of the service (`round()` gives each round's target) and of the reference
 * (`reference`), alternating, BENCH_DURATION_S each at BENCH_CONNECTIONS, with CPU per request.
 */
export async function alternatingRounds(
  fixture: Fixture,
  round: () => ServiceRound,
  reference: Target,
): Promise<{ service: Figures[]; reference: Figures[] }> {
  const options = {
    seconds: BENCH.durationS,
    connections: BENCH.connections,
    postmasterPid: fixture.postmasterPid,
  };
  const service: Figures[] = [];
  const baseline: Figures[] = [];
  for (let i = 0; i < BENCH.rounds; i++) {
    const { target, warmUp } = round();
    service.push(
      await measureWithCpu(target, { ...options, warmUp, serverPid: fixture.service.pid }),
    );
    baseline.push(await measureWithCpu(reference, { ...options, serverPid: fixture.baseline.pid }));
  }
  return { service, reference: baseline };
}

export function row(name: string, figures: Figures): string {
  const us = (value: number) => value.toFixed(0);
  return `| ${name} | ${figures.rps.toFixed(0)} | ${figures.p50} | ${figures.p99} | ${us(figures.serverCpuUs)} | ${us(figures.postgresCpuUs)} | ${figures.errors} |`;
}

export const TABLE_HEAD = [
  '| server | req/s | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req | errors |',
  '|---|--:|--:|--:|--:|--:|--:|',
];

/**
 * Both servers' medians over their rounds, the service's throughput as a share of the
 * reference's, and the lines that print them: the table, the ratio beside `targetRatio`, the rounds.
 */
export function comparison(
  rounds: { service: Figures[]; reference: Figures[] },
  targetRatio: number,
): { service: Figures; reference: Figures; ratio: number; lines: string[] } {
  const service = median(rounds.service);
  const reference = median(rounds.reference);
  const ratio = service.rps / reference.rps;
  const each = (all: Figures[]) => all.map((figures) => figures.rps.toFixed(0)).join(', ');
  return {
    service,
    reference,
    ratio,
    lines: [
      ...TABLE_HEAD,
      row('service', service),
      row('reference (baseline B)', reference),
      `service / reference: ${ratio.toFixed(2)} × (target ≥ ${targetRatio} ×)`,
      `service rounds (req/s): ${each(rounds.service)}; reference rounds: ${each(rounds.reference)}`,
    ],
  };
}
