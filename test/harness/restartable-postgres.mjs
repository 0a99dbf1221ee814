// An embedded PostgreSQL in a process of its own, which a test can stop and start again on the
// same port (the package is ESM-only, which jest's module system cannot load). Commands on stdin:
// `stop`, `start`, `exit`; answers on stdout, one JSON line each: {"event":"started","url":…}.
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { FAST_TEST_FLAGS } from '../../scripts/lib/temp-database.mjs';
import { requireTs } from '../../scripts/lib/typescript.mjs';

const { startEmbeddedPostgres } = requireTs('src/database/embedded-postgres.ts');
const dir = process.argv[2];
const say = (message) => process.stdout.write(JSON.stringify(message) + '\n');

/**
 * A free port below the kernel's ephemeral range (32768 and up): the cluster is started again on
 * it after a stop, and a port from that range may meanwhile be the local end of any test's
 * outgoing connection or another helper's `listen(0)`.
 */
async function portOutsideEphemeralRange() {
  for (;;) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise((done) => {
      const probe = createServer()
        .once('error', () => done(false))
        .listen(candidate, '127.0.0.1', () => probe.close(() => done(true)));
    });
    if (free) return candidate;
  }
}

const port = await portOutsideEphemeralRange();
let server = await startEmbeddedPostgres({ dir, persistent: true, port, flags: FAST_TEST_FLAGS });
say({ event: 'started', url: server.url });

for await (const line of createInterface({ input: process.stdin })) {
  const command = line.trim();
  if (command === 'stop') {
    await server.stop();
    say({ event: 'stopped' });
  } else if (command === 'start') {
    server = await startEmbeddedPostgres({ dir, persistent: true, port, flags: FAST_TEST_FLAGS });
    say({ event: 'started', url: server.url });
  } else if (command === 'exit') {
    break;
  }
}
await server.stop();
process.exit(0);
