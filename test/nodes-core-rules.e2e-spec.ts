import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, isIP, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coreConfig, type CoreNode, TUNNEL_INBOUND_TAG } from '../src/nodes/reality';
import { freePort } from './harness/processes';

/**
 * The routing rules the service writes, on a real core: Debian's V2Ray 4.34 (VLESS without REALITY)
 * runs the V2Ray variant of `coreConfig`, a second V2Ray is a subscriber's client (SOCKS in, VLESS
 * out), and connections through the tunnel to the node's loopback, its API port, a private address,
 * IPv6 forms that carry an inward IPv4 address and a name that points inward are refused, while the
 * same destination is reached once the test adds one rule of its own that allows it. The node's
 * `direct` outbound is redirected to the test's own listener, so whatever the rules let out is seen
 * to arrive (a NAT64 or 6to4 address would otherwise fail on this machine for want of a route, and
 * look refused whatever the rules say). Both cores resolve names only through loopback.
 */
const V2RAY = 'v2ray';
const HELLO = 'hello from the destination';
/** Name resolution of the test's cores: a fixed table and loopback, never the machine's resolver. */
const LOOPBACK_DNS = { hosts: { localhost: '127.0.0.1' }, servers: ['127.0.0.1'] };

/** The SOCKS5 address of `host`: IPv4 (1), a name (3) or IPv6 (4), as a subscriber's app sends it. */
function socksAddress(host: string): Buffer {
  if (isIP(host) === 4) return Buffer.from([1, ...host.split('.').map(Number)]);
  if (isIP(host) === 6) {
    // URL writes the address with hexadecimal groups only, at most one `::` among them.
    const [head, tail] = new URL(`http://[${host}]/`).hostname.slice(1, -1).split('::');
    const groupsOf = (part: string | undefined): string[] => (part ? part.split(':') : []);
    const zeros = 8 - groupsOf(head).length - groupsOf(tail).length;
    const full =
      tail === undefined
        ? groupsOf(head)
        : [...groupsOf(head), ...Array<string>(zeros).fill('0'), ...groupsOf(tail)];
    const bytes = Buffer.alloc(16);
    full.forEach((group, index) => bytes.writeUInt16BE(parseInt(group, 16), index * 2));
    return Buffer.concat([Buffer.from([4]), bytes]);
  }
  const name = Buffer.from(host);
  return Buffer.concat([Buffer.from([3, name.length]), name]);
}

function v2rayMissing(): string | null {
  const found = spawnSync(V2RAY, ['-version'], { encoding: 'utf8' });
  if (found.error === undefined && found.status === 0) return null;
  return (
    'this test runs Debian\'s v2ray (4.x): install it with "apt-get install v2ray" ' +
    '(.ci/run does in CI)'
  );
}

/** Connects through the client's SOCKS port to `host:port`, sends an HTTP GET; what came back. */
function throughTunnel(socksPort: number, host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(socksPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    let stage: 'greeting' | 'reply' | 'data' = 'greeting';
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(done, 3000);
    socket.on('connect', () => socket.write(Buffer.from([5, 1, 0])));
    socket.on('data', (data: Buffer) => {
      if (stage === 'greeting') {
        stage = 'reply';
        const request = Buffer.concat([
          Buffer.from([5, 1, 0]),
          socksAddress(host),
          Buffer.from([port >> 8, port & 255]),
        ]);
        socket.write(request);
      } else if (stage === 'reply') {
        stage = 'data';
        if (data[1] !== 0) return done();
        socket.write(`GET / HTTP/1.0\r\nHost: ${host}\r\n\r\n`);
      } else {
        chunks.push(data);
      }
    });
    socket.on('error', done);
    socket.on('close', done);
  });
}

async function listening(port: number, child: ChildProcess, what: string): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < 10_000) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not listen on ${port}`);
}

describe('nodes: what the core config blocks, on a real V2Ray', () => {
  const missing = v2rayMissing();
  const dir = mkdtempSync(join(tmpdir(), 'core-rules-'));
  const children: ChildProcess[] = [];
  let destination: Server;
  let httpPort: number;

  beforeAll(async () => {
    destination = createHttpServer((_request, response) => response.end(HELLO));
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    httpPort = (destination.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await new Promise<void>((resolve) => destination.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** A node core with `extraRules` placed before the service's own, and a client to it. */
  async function tunnel(
    extraRules: Record<string, unknown>[],
  ): Promise<{ socksPort: number; apiPort: number }> {
    const [tunnelPort, apiPort, socksPort] = [await freePort(), await freePort(), await freePort()];
    const userId = randomUUID();
    const node: CoreNode = {
      host: 'node.example.test',
      tunnelPort,
      sniDomain: 'www.example.com',
      shortIds: [],
      realityPrivateKey: '',
    };
    const server = coreConfig(node, { core: 'v2ray', listen: '127.0.0.1', apiPort }) as {
      inbounds: { tag: string; settings: { clients: unknown[] } }[];
      outbounds: { tag?: string; settings?: Record<string, unknown> }[];
      routing: { rules: unknown[] };
      dns?: unknown;
    };
    server.dns = LOOPBACK_DNS;
    // Whatever the rules let out arrives at the test's listener, whichever address it was for.
    const direct = server.outbounds.find((outbound) => outbound.tag === 'direct')!;
    direct.settings = { ...direct.settings, redirect: `127.0.0.1:${httpPort}` };
    // The agent adds users through the API; a user listed in the file stands in for it here.
    server.inbounds
      .find((inbound) => inbound.tag === TUNNEL_INBOUND_TAG)!
      .settings.clients.push({ id: userId, email: 'user@test', level: 0 });
    server.routing.rules.splice(1, 0, ...extraRules);
    const client = {
      log: { loglevel: 'warning' },
      dns: LOOPBACK_DNS,
      routing: { domainStrategy: 'AsIs', rules: [] },
      inbounds: [
        { listen: '127.0.0.1', port: socksPort, protocol: 'socks', settings: { auth: 'noauth' } },
      ],
      outbounds: [
        {
          protocol: 'vless',
          settings: {
            vnext: [
              {
                address: '127.0.0.1',
                port: tunnelPort,
                users: [{ id: userId, encryption: 'none' }],
              },
            ],
          },
          streamSettings: { network: 'tcp' },
        },
      ],
    };
    for (const [name, config, port] of [
      ['node', server, tunnelPort],
      ['client', client, socksPort],
    ] as const) {
      const file = join(dir, `${name}-${tunnelPort}.json`);
      writeFileSync(file, JSON.stringify(config));
      const child = spawn(V2RAY, ['-config', file], { stdio: 'ignore' });
      children.push(child);
      await listening(port, child, `v2ray (${name})`);
    }
    return { socksPort, apiPort };
  }

  it('refuses the node itself, its API port, private addresses (also through NAT64, 6to4 and IPv4-mapped) and inward names; a rule of the test lets its own destination through', async () => {
    if (missing) {
      throw new Error(missing);
    }
    const blocked = await tunnel([]);
    const reached: string[] = [];
    for (const [host, port] of [
      ['127.0.0.1', httpPort], // another loopback port of the node
      ['127.0.0.1', blocked.apiPort], // the core's API
      ['localhost', httpPort], // a name that resolves inward
      ['10.0.0.1', 80], // a private address
      ['169.254.169.254', 80], // link-local (cloud metadata)
      ['64:ff9b::a9fe:a9fe', 80], // the same through NAT64
      ['64:ff9b:1::a9fe:a9fe', 80], // the same through a local-use NAT64 prefix
      ['2002:a9fe:a9fe::1', 80], // the same through 6to4
      ['::ffff:169.254.169.254', 80], // the same, IPv4-mapped
      ['::ffff:10.0.0.1', 80], // a private address, IPv4-mapped
      ['::a9fe:a9fe', 80], // the same, IPv4-compatible (deprecated)
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 80], // Teredo, whose client address is IPv4
      ['node.example.test', httpPort], // the node's own name
    ] as const) {
      const answer = await throughTunnel(blocked.socksPort, host, port);
      if (answer.length > 0) reached.push(`${host} port ${port}`);
    }
    expect(reached).toEqual([]);

    // A public destination is let out (to the test's listener): the refusals above are the rules'.
    expect(await throughTunnel(blocked.socksPort, '2001:db8::1', 80)).toContain(HELLO);
    expect(await throughTunnel(blocked.socksPort, '93.184.215.14', 80)).toContain(HELLO);

    // The same destination, allowed by one rule only the test adds: the tunnel itself works.
    const allowed = await tunnel([
      { type: 'field', ip: ['127.0.0.1/32'], port: String(httpPort), outboundTag: 'direct' },
    ]);
    expect(await throughTunnel(allowed.socksPort, '127.0.0.1', httpPort)).toContain(HELLO);
    expect(await throughTunnel(allowed.socksPort, '127.0.0.1', allowed.apiPort)).toBe('');
  }, 60_000);
});
