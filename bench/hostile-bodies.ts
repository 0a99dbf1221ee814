/**
 * `npm run bench:hostile-bodies`: `/health` while 100 costly-to-refuse bodies arrive at once
 * (issue 43: p99 under 50 ms). Bodies of 49 KB: 5,000 unknown keys ("wide"), or arrays nested
 * 24,500 deep ("deep"), at the seed sign-in, which anyone may call (over its 8 KB: refused unread),
 * and at a signed-in route (`POST /tickets`, under BODY_LIMIT: read, counted and refused before
 * anything is built); beside them, measured in the same run, 100 ordinary bodies (`{}` at the seed
 * sign-in, refused by its throttle or validation) and no burst at all. The built service runs as an operator
 * runs it (lib/fixture.ts); the client runs in a process of its own (lib/body-burst-client.mjs).
 * Each kind is sent once to warm up, then ROUNDS times, the kinds taking turns.
 *
 *   npm run bench:hostile-bodies [-- rounds]
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFixture } from './lib/fixture';
import { processCpuUs } from './lib/processes';

const ROUNDS = Number(process.argv[2] ?? 5);
const BURST = 100;
const CLIENT = join(__dirname, 'lib', 'body-burst-client.mjs');

const SIGN_IN = '/api/v1/auth/seed/login';
const SIGNED_IN = '/api/v1/tickets';
const WIDE = JSON.stringify(
  Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 1])),
);
const DEEP = `${'['.repeat(24_500)}${']'.repeat(24_500)}`;

const KINDS: { kind: string; path: string; body: string; count: number; signedIn?: boolean }[] = [
  { kind: 'no burst', path: SIGN_IN, body: '{}', count: 0 },
  { kind: '100 ordinary bodies (`{}`), seed sign-in', path: SIGN_IN, body: '{}', count: BURST },
  { kind: '100 wide bodies, seed sign-in', path: SIGN_IN, body: WIDE, count: BURST },
  { kind: '100 deep bodies, seed sign-in', path: SIGN_IN, body: DEEP, count: BURST },
  { kind: '100 wide bodies, signed in', path: SIGNED_IN, body: WIDE, count: BURST, signedIn: true },
  { kind: '100 deep bodies, signed in', path: SIGNED_IN, body: DEEP, count: BURST, signedIn: true },
];

interface Burst {
  statuses: Record<string, number>;
  burstMs: number;
  healthFailures: number;
  health: number[];
}

async function main(): Promise<void> {
  const fixture = await startFixture({
    baseline: false,
    env: process.env.XL ? { BODY_LIMIT: process.env.XL } : {},
  });
  try {
    const signup = await fetch(`${fixture.service.url}/api/v1/auth/seed`, { method: 'POST' });
    const { access_token: token } = (await signup.json()) as { access_token: string };
    const files = KINDS.map(({ kind, path, body, count, signedIn }, i) => {
      const file = join(fixture.dir, `body-${i}.json`);
      writeFileSync(file, body);
      return { kind, file, count, path, authorization: signedIn ? `Bearer ${token}` : '' };
    });
    type Sent = (typeof files)[number];
    const burst = async (sent: Sent): Promise<Burst & { cpuMs: number }> => {
      const before = processCpuUs(fixture.service.pid);
      const { stdout } = await promisify(execFile)(process.execPath, [
        CLIENT,
        fixture.service.url,
        sent.path,
        sent.file,
        String(sent.count),
        sent.authorization,
      ]);
      const cpuMs = (processCpuUs(fixture.service.pid) - before) / 1000;
      return { ...(JSON.parse(stdout) as Burst), cpuMs };
    };
    for (const sent of files) await burst(sent);

    const results = new Map(files.map(({ kind }) => [kind, [] as (Burst & { cpuMs: number })[]]));
    const loads: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const sent of files) {
        results.get(sent.kind)!.push(await burst(sent));
        loads.push(loadavg()[0]);
      }
    }

    const quantile = (sorted: number[], q: number) =>
      sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    const rows = [...results].map(([kind, bursts]) => {
      const health = bursts.flatMap((b) => b.health).sort((a, b) => a - b);
      const statuses: Record<string, number> = {};
      for (const b of bursts)
        for (const [status, n] of Object.entries(b.statuses))
          statuses[status] = (statuses[status] ?? 0) + n;
      const cpu = bursts.reduce((sum, b) => sum + b.cpuMs, 0) / bursts.length;
      const failures = bursts.reduce((sum, b) => sum + b.healthFailures, 0);
      return (
        `| ${kind} | ${
          Object.entries(statuses)
            .map(([status, n]) => `${n}× ${status}`)
            .join(', ') || '–'
        } | ${health.length} | ${quantile(health, 0.5).toFixed(1)} | ` +
        `${quantile(health, 0.99).toFixed(1)} | ${health[health.length - 1].toFixed(1)} | ` +
        `${failures} | ${cpu.toFixed(0)} |`
      );
    });
    process.stdout.write(
      `${ROUNDS} rounds; ${cpus().length} × ${cpus()[0].model}; load average during the rounds ` +
        `${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}\n\n` +
        '| burst | answers | /health polls | p50 ms | p99 ms | max ms | polls not 200 | service CPU per burst, ms |\n' +
        '| --- | --- | --- | --- | --- | --- | --- | --- |\n' +
        rows.join('\n') +
        '\n',
    );
  } finally {
    await fixture.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
