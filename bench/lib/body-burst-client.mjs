// The client of `bench:hostile-bodies`, in its own process so that building and sending bodies
// never shares an event loop with the service or delays the health polls it times:
// `node bench/lib/body-burst-client.mjs <base url> <path> <body file> <count> [authorization]`
// sends `count` copies of the body to POST <path> at once, each on its own connection, while a GET
// /api/v1/health is sent every 5 ms (each on its own connection too, as separate clients would),
// from 100 ms before the burst to its last answer. Prints {statuses, burstMs, health: [ms, ...]}.
import { request } from 'node:http';
import { readFileSync } from 'node:fs';

const [base, path, bodyFile, countText, authorization] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const count = Number(countText);
const url = new URL(base);

function send(method, path, payload) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        agent: false,
        headers: payload
          ? {
              'content-type': 'application/json',
              'content-length': payload.length,
              ...(authorization ? { authorization } : {}),
            }
          : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const polls = [];
const poller = setInterval(() => polls.push(send('GET', '/api/v1/health')), 5);
await new Promise((r) => setTimeout(r, 100));
const started = performance.now();
const answers = await Promise.all(
  Array.from({ length: count }, () =>
    send('POST', path, body).catch((error) => ({ status: error.code })),
  ),
);
const burstMs = performance.now() - started;
clearInterval(poller);
const health = await Promise.all(polls);
const statuses = {};
for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
process.stdout.write(
  JSON.stringify({
    statuses,
    burstMs,
    healthFailures: health.filter((h) => h.status !== 200).length,
    health: health.map((h) => h.ms),
  }),
);
