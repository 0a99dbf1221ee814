// The load generator of the benchmarks, in its own process so it never shares the server's event
// loop: `node bench/lib/load-worker.mjs <config.json>` prints autocannon's JSON result.
// Config: {url, method, headers, connections, durationS, bodiesFile?}; with `bodiesFile` (one JSON
// body per line) every request sends the next body, each used once (cycling only if they run out).
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const bodies = config.bodiesFile
  ? readFileSync(config.bodiesFile, 'utf8').split('\n').filter(Boolean)
  : null;
let next = 0;

autocannon(
  {
    url: config.url,
    method: config.method ?? 'GET',
    headers: config.headers ?? {},
    connections: config.connections,
    duration: config.durationS,
    requests: bodies
      ? [{ setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }) }]
      : undefined,
  },
  (error, result) => {
    if (error) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    process.stdout.write(JSON.stringify({ ...result, bodiesUsed: next }));
  },
);
