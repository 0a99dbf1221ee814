import { FakeCore } from './fake-core';

/** A question from the test to the fake core's process: its users' count, or a restart first. */
export interface Ask {
  id: number;
  op: 'size' | 'restart';
}

/** The fake core's own process (see fake-core-process.ts): answers each ask with its user count. */
async function serve(): Promise<void> {
  const core = new FakeCore('xray', 'vless-reality');
  await core.start();
  process.on('message', (ask: Ask) => {
    if (ask.op === 'restart') core.restart();
    process.send!({ id: ask.id, value: core.users.size });
  });
  process.send!({ id: -1, value: core.port });
}

if (process.send) void serve();
