import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './app';
import { newUser, type TestUser } from './factories';
import { SecretBox } from '../../src/common/secret-box';
import { sshKeyPair } from '../fakes/ssh-server';

export interface NodeBody {
  name: string;
  host: string;
  ssh_private_key: string;
  sni_domain: string;
  [field: string]: unknown;
}

/** A valid create body; the key is a fresh ed25519 key unless given. */
export function nodeBody(overrides: Partial<NodeBody> = {}): NodeBody {
  return {
    name: `node-${Math.random().toString(36).slice(2, 8)}`,
    host: '127.0.0.1',
    ssh_private_key: sshKeyPair().privateKey,
    sni_domain: 'www.example.com',
    ...overrides,
  };
}

/** Creates a node through the API as `staff`; its response body. */
export async function createNode(
  t: TestApp,
  staff: TestUser,
  overrides: Partial<NodeBody> = {},
): Promise<Record<string, unknown> & { id: string }> {
  const response = await t
    .http()
    .post('/api/v1/admin/nodes')
    .set(staff.bearer)
    .send(nodeBody(overrides));
  if (response.status !== 201) {
    throw new Error(
      `creating a node answered ${response.status}: ${JSON.stringify(response.body)}`,
    );
  }
  return response.body as Record<string, unknown> & { id: string };
}

/** A seed account whose subscription runs for another month. */
export function subscribedUser(t: TestApp): Promise<TestUser> {
  return newUser(t, 'seed', {
    planName: 'monthly',
    subscriptionExpiresAt: new Date(Date.now() + 30 * 86_400_000),
  });
}

/** A TCP listener on 127.0.0.1 (a node's tunnel port that answers). */
export async function tcpListener(): Promise<{
  port: number;
  server: Server;
  close(): Promise<void>;
}> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A port on 127.0.0.1 that nothing listens on, taken below the kernel's ephemeral range: a port
 * the kernel hands out itself (another test's `listen(0)`, or a probe's own source port, which
 * would connect to itself) could start answering while the test still counts on it refusing.
 */
export async function closedPort(): Promise<number> {
  const ephemeralLow = ephemeralPortsStart();
  for (;;) {
    const port = ephemeralLow - 1 - randomInt(Math.min(16_000, ephemeralLow - 1025));
    if (await isFree(port)) return port;
  }
}

function ephemeralPortsStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    return Number(low) > 1025 ? Number(low) : 32_768;
  } catch {
    return 32_768;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Polls `check` until it returns true or `timeoutMs` passes; the elapsed ms, or throws. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The node's own `X-Internal-Secret`, as provisioning hands it to the node's agent. */
export async function nodeSecret(t: TestApp, nodeId: string): Promise<string> {
  const [row] = (await t.dataSource.query(`SELECT agent_secret_enc FROM nodes WHERE id = $1`, [
    nodeId,
  ])) as { agent_secret_enc: string }[];
  return new SecretBox(t.settings.dataEncryptionKey).open(row.agent_secret_enc);
}
