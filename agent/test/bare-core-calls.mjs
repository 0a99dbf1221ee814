/**
 * The floor of the agent's core calls, for credentials.e2e-spec's bar: unary gRPC calls made with
 * node's http2 alone, from frames encoded beforehand, on one connection with `inFlight` of them at
 * once, as the agent's core client makes them. Run as
 * `node bare-core-calls.mjs <host:port> <gRPC path> <in flight> <file of frames>` (the file holds
 * whole gRPC frames one after another); prints one JSON line: the calls, those the core did not
 * answer with OK, and this process's CPU time and wall time for them, in ms.
 */
import { readFileSync } from 'node:fs';
import * as http2 from 'node:http2';

const [address, grpcPath, inFlightText, framesFile] = process.argv.slice(2);
const inFlight = Number(inFlightText);

const bytes = readFileSync(framesFile);
const frames = [];
for (let at = 0; at < bytes.length;) {
  const end = at + 5 + bytes.readUInt32BE(at + 1);
  frames.push(bytes.subarray(at, end));
  at = end;
}

const session = http2.connect(`http://${address}`);
await new Promise((resolve, reject) => {
  session.once('connect', resolve);
  session.once('error', reject);
});

/** One call; resolves with whether the core answered gRPC status OK. */
function call(frame) {
  return new Promise((resolve) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': grpcPath,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': '5000m',
    });
    let status = null;
    const read = (headers) => {
      if (headers['grpc-status'] !== undefined) status = headers['grpc-status'];
    };
    stream.on('response', read);
    stream.on('trailers', read);
    stream.on('data', () => {});
    stream.on('error', () => {});
    stream.on('close', () => resolve(status === '0'));
    stream.end(frame);
  });
}

const cpuBefore = process.cpuUsage();
const started = process.hrtime.bigint();
let next = 0;
let failed = 0;
async function worker() {
  while (next < frames.length) {
    const frame = frames[next];
    next += 1;
    if (!(await call(frame))) failed += 1;
  }
}
await Promise.all(Array.from({ length: Math.min(inFlight, frames.length) }, worker));
const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
const cpu = process.cpuUsage(cpuBefore);
session.close();
console.log(
  JSON.stringify({ calls: frames.length, failed, cpuMs: (cpu.user + cpu.system) / 1000, wallMs }),
);
