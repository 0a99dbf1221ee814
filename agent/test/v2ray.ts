import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { CoreClient } from '../src/core-client';

export const V2RAY = '/usr/bin/v2ray';

/**
 * Fails with the way to get Debian's v2ray (4.34, VLESS without REALITY) when it is missing; CI
 * installs it (.ci/run), so there the failure means the install step broke.
 */
export function requireV2ray(): void {
  if (existsSync(V2RAY)) return;
  throw new Error(
    process.env.CI
      ? `${V2RAY} is missing in CI: .ci/run installs it with apt-get install v2ray`
      : `${V2RAY} is missing: install it with apt-get install v2ray (Debian's package, 4.34)`,
  );
}

export interface V2rayProcess {
  child: ChildProcess;
  config: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Name resolution of every v2ray the tests run: a fixed table and a DNS server on loopback, never
 * the machine's resolver. A node core resolves each name it is asked to tunnel to (its routing is
 * `IPIfNonMatch`), and tests send no DNS query off the machine.
 */
export const LOOPBACK_DNS = { hosts: { localhost: '127.0.0.1' }, servers: ['127.0.0.1'] };

/** Runs v2ray with `config`, given `LOOPBACK_DNS` unless it has a `dns` block of its own. */
export function runV2ray(dir: string, name: string, config: object): V2rayProcess {
  const file = path.join(dir, `${name}.json`);
  const resolved = 'dns' in config ? config : { ...config, dns: LOOPBACK_DNS };
  writeFileSync(file, JSON.stringify(resolved, null, 2));
  const child = spawn(V2RAY, ['-config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    config: file,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The subscriber's side: a SOCKS inbound on loopback to the node's VLESS inbound with `id`. */
export function clientConfig(socksPort: number, tunnelPort: number, id: string): object {
  return {
    log: { loglevel: 'warning' },
    // Names go through the tunnel as names: the node resolves them, the client never does.
    dns: LOOPBACK_DNS,
    routing: { domainStrategy: 'AsIs', rules: [] },
    inbounds: [
      { listen: '127.0.0.1', port: socksPort, protocol: 'socks', settings: { udp: false } },
    ],
    outbounds: [
      {
        protocol: 'vless',
        settings: {
          vnext: [{ address: '127.0.0.1', port: tunnelPort, users: [{ id, encryption: 'none' }] }],
        },
      },
    ],
  };
}

/** Waits until the core's API answers. */
export async function waitForCoreApi(address: string, timeoutMs = 15_000): Promise<void> {
  const client = new CoreClient(address, 'v2ray.core', 'vless-in', 1_000);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await client.uptime();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    client.close();
  }
}

/** Waits until something accepts TCP connections on 127.0.0.1:port. */
export async function waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Fetched {
  status: number | null;
  /** Body bytes received. */
  bytes: number;
  /** The body was received whole (as long as its Content-Length) before the connection ended. */
  complete: boolean;
  /** When the last body bytes arrived (ms since the epoch; 0 when none did). */
  lastDataAt: number;
}

/**
 * An HTTP/1.0 GET through a SOCKS5 proxy (as the subscriber's apps use the client), counting the
 * body's bytes; `onProgress` sees the running count. A connection the tunnel refuses ends with no
 * status. Bounded by `timeoutMs`, and by `idleMs` without bytes once the answer began (a client
 * whose tunnel connection the node closed may keep its local connection open, silent).
 */
export function socksGet(
  socksPort: number,
  target: { host: string; port: number; path: string },
  options: { timeoutMs?: number; idleMs?: number; onProgress?: (bytes: number) => void } = {},
): Promise<Fetched> {
  const ip = target.host.split('.').map(Number);
  return new Promise((resolve) => {
    const socket = net.connect(socksPort, '127.0.0.1');
    let stage: 'greeting' | 'connect' | 'http' = 'greeting';
    let buffer = Buffer.alloc(0);
    let status: number | null = null;
    let length = -1;
    let bytes = 0;
    let settled = false;
    let lastDataAt = 0;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(idle);
      socket.destroy();
      resolve({ status, bytes, complete: length >= 0 && bytes === length, lastDataAt });
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 30_000);
    const idle = setInterval(() => {
      if (lastDataAt && options.idleMs && Date.now() - lastDataAt > options.idleMs) finish();
    }, 100);
    socket.on('connect', () => socket.write(Buffer.from([5, 1, 0])));
    socket.on('data', (chunk: Buffer) => {
      if (stage === 'http' && status !== null) {
        bytes += chunk.length;
        lastDataAt = Date.now();
        options.onProgress?.(bytes);
        return;
      }
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting' && buffer.length >= 2) {
        buffer = buffer.subarray(2);
        stage = 'connect';
        const port = Buffer.alloc(2);
        port.writeUInt16BE(target.port);
        socket.write(Buffer.concat([Buffer.from([5, 1, 0, 1, ...ip]), port]));
      }
      if (stage === 'connect' && buffer.length >= 10) {
        if (buffer[1] !== 0) return finish();
        buffer = buffer.subarray(10);
        stage = 'http';
        socket.write(`GET ${target.path} HTTP/1.0\r\nHost: ${target.host}\r\n\r\n`);
      }
      if (stage === 'http') {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString('latin1');
        status = Number(/^HTTP\/1\.\d (\d{3})/.exec(head)?.[1] ?? 0);
        length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? -1);
        bytes = buffer.length - end - 4;
        lastDataAt = Date.now();
        buffer = Buffer.alloc(0);
        options.onProgress?.(bytes);
      }
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}
