/**
 * `npm run bench:input-checks`: what the per-body checks in front of every route cost (the
 * hostile-input walk: depth, entry budget, prototype names, NUL), beside JSON.parse of the same
 * body measured in the same run, on the hot routes' bodies. No server: a micro-measure.
 */
import { hostileInputProblem } from '../src/common/hostile-input';

const BODIES: Record<string, string> = {
  'seed login': JSON.stringify({ seed: 'abandon ability able about above absent absorb abstract' }),
  'staff login': JSON.stringify({ username: 'owner', password: 'correct horse battery staple' }),
  'game score, 60 clicks': JSON.stringify({
    clicks: Array.from({ length: 60 }, (_, i) => [i % 10, (i * 3) % 10]),
  }),
  'ticket message, 4,000 chars': JSON.stringify({ body: 'x'.repeat(4000) }),
};

function nsPerCall(work: () => unknown, iterations: number): number {
  for (let i = 0; i < iterations / 10; i++) work();
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) work();
  return Number(process.hrtime.bigint() - started) / iterations;
}

const rows: string[] = [];
for (const [name, text] of Object.entries(BODIES)) {
  const parsed: unknown = JSON.parse(text);
  const iterations = 200_000;
  const parse = nsPerCall(() => JSON.parse(text), iterations);
  const check = nsPerCall(() => hostileInputProblem(parsed), iterations);
  rows.push(
    `| ${name} | ${text.length} | ${(parse / 1000).toFixed(2)} | ${(check / 1000).toFixed(2)} | ` +
      `${((check / parse) * 100).toFixed(0)}% |`,
  );
}
process.stdout.write(
  '| body | bytes | JSON.parse µs (baseline) | checks µs | checks / parse |\n' +
    '| --- | --- | --- | --- | --- |\n' +
    rows.join('\n') +
    '\n',
);
