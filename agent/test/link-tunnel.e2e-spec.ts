import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { SecretBox } from '../../src/common/secret-box';
import { CredentialsNudger } from '../../src/devices/credentials-nudger';
import { coreConfig, TUNNEL_INBOUND_TAG } from '../../src/nodes/reality';
import { startTestApp, type TestApp } from '../../test/harness/app';
import { newUser, savePlan, type TestUser } from '../../test/harness/factories';
import { createNode, nodeSecret, subscribedUser, waitFor } from '../../test/harness/nodes';
import { freePort } from '../../test/harness/processes';
import { sleep, spawnAgent, tempDir, tlsFiles, type AgentProcess } from './helpers';
import { ServiceProxy } from './service-proxy';
import {
  requireV2ray,
  runV2ray,
  socksGet,
  waitForCoreApi,
  waitForPort,
  type Fetched,
  type V2rayProcess,
} from './v2ray';

const PAYLOAD = 4 * 1024 * 1024;
const REPORT_INTERVAL_S = 2;
/** The bound the contract sets on a device starting or stopping on its nodes. */
const PROPAGATION_MS = 5_000;
/** How long the service stays away while a node keeps serving (the two minutes). */
const SERVICE_AWAY_MS = Number(process.env.LINK_TUNNEL_AWAY_MS ?? 120_000);

jest.setTimeout(300_000);

interface TunnelNode {
  id: string;
  tunnelPort: number;
  apiPort: number;
  accessLog: string;
  core: V2rayProcess;
  agent: AgentProcess;
  proxy: ServiceProxy;
  coreConfig: object;
}

/**
 * The subscription link on real nodes: Debian's v2ray as two nodes' cores and as the subscriber's
 * clients, the built agent beside each core, the service's link and nudges. A device made by a
 * fetch of the link connects within seconds; removed, blocked, used-up and expired devices stop
 * within seconds and their downloads end; a core restart and the service's absence do not stop
 * the devices; one network address per device, on a node and across nodes. (v2ray 4.34 has no
 * REALITY: the nodes serve plain VLESS over TCP, and the clients take the id, host and port from
 * the link.) AGENT_TEST_DEBUG=1 prints the agents' logs and the cores' access logs.
 */
describe('the subscription link on real nodes', () => {
  let t: TestApp;
  let owner: TestUser;
  let dir: string;
  let destination: http.Server;
  let destinationPort: number;
  const nodes: TunnelNode[] = [];
  const clients: V2rayProcess[] = [];

  beforeAll(async () => {
    requireV2ray();
    dir = tempDir('link-tunnel');
    t = await startTestApp({ APP_URL: 'https://vpn.example.test' });
    owner = await newUser(t, 'owner');
    await savePlan(t, owner);

    destination = http.createServer((request, response) => {
      if (request.url === '/payload') {
        response.writeHead(200, { 'content-length': PAYLOAD });
        response.end(Buffer.alloc(PAYLOAD, 7));
      } else if (request.url === '/stream') {
        // 16 KB every 20 ms until the connection closes, and never longer than 60 s.
        response.writeHead(200);
        const started = Date.now();
        const timer = setInterval(() => {
          if (Date.now() - started > 60_000) {
            clearInterval(timer);
            response.end();
          } else response.write(Buffer.alloc(16 * 1024, 1));
        }, 20);
        response.on('close', () => clearInterval(timer));
      } else {
        response.writeHead(200, { 'content-length': 5 });
        response.end('hello');
      }
    });
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    destinationPort = (destination.address() as AddressInfo).port;

    for (let i = 0; i < 2; i++) nodes.push(await startNode(`node-${i}`));
    await t.app.get(CredentialsNudger).start();
  }, 180_000);

  afterAll(async () => {
    if (process.env.AGENT_TEST_DEBUG) {
      for (const node of nodes) {
        console.error(JSON.stringify(node.agent.lines.slice(-80), null, 1));
        console.error(readFileSync(node.accessLog, 'utf8').slice(-5000));
      }
    }
    for (const node of nodes) {
      await node.agent.stop();
      await node.core.stop();
      await node.proxy.close();
    }
    for (const client of clients) await client.stop();
    await new Promise((resolve) => destination?.close(resolve));
    await t?.close();
  });

  async function startNode(name: string): Promise<TunnelNode> {
    const apiPort = await freePort();
    const tunnelPort = await freePort();
    const accessLog = path.join(dir, `${name}-access.log`);
    const config = coreConfig(
      {
        host: '127.0.0.1',
        tunnelPort,
        sniDomain: 'www.example.com',
        shortIds: [],
        realityPrivateKey: '',
      },
      { core: 'v2ray', listen: '127.0.0.1', apiPort, accessLog },
    ) as { routing: { rules: object[] } };
    // The test's own destination is allowed by one rule that only the test adds, before the rest.
    config.routing.rules.splice(1, 0, {
      type: 'field',
      ip: ['127.0.0.1'],
      port: String(destinationPort),
      outboundTag: 'direct',
    });
    const core = runV2ray(dir, `${name}-core`, config);
    await waitForCoreApi(`127.0.0.1:${apiPort}`);

    const admissionPort = await freePort();
    const { id } = await createNode(t, owner, {
      name,
      tunnel_port: tunnelPort,
      admission_port: admissionPort,
    });
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [id],
    );
    const [made] = (await t.dataSource.query(
      `SELECT admission_cert_pem, admission_key_enc, admission_cert_sha256 FROM nodes WHERE id = $1`,
      [id],
    )) as {
      admission_cert_pem: string;
      admission_key_enc: string;
      admission_cert_sha256: string;
    }[];
    const nodeDir = tempDir(name);
    const tls = tlsFiles(
      nodeDir,
      made.admission_cert_pem,
      new SecretBox(t.settings.dataEncryptionKey).open(made.admission_key_enc),
      made.admission_cert_sha256,
    );
    const proxy = new ServiceProxy(t.baseUrl);
    await proxy.start();
    const agent = spawnAgent({
      VPN_API_URL: `${proxy.url}/api/v1`,
      VPN_NODE_ID: id,
      VPN_NODE_SECRET: await nodeSecret(t, id),
      CORE_API: `127.0.0.1:${apiPort}`,
      CORE_API_PREFIX: 'v2ray.core',
      CORE_INBOUND_TAG: TUNNEL_INBOUND_TAG,
      CORE_ACCESS_LOG: accessLog,
      TUNNEL_PORT: String(tunnelPort),
      ADMISSION_HOST: '127.0.0.1',
      ADMISSION_PORT: String(admissionPort),
      TLS_CERT: tls.cert,
      TLS_KEY: tls.key,
      JOURNAL_DIR: path.join(nodeDir, 'journal'),
      REPORT_INTERVAL_S: String(REPORT_INTERVAL_S),
      LIMITS_INTERVAL_S: '60',
      // Only a nudge makes a device work in time: the poll is a minute apart.
      CREDENTIALS_POLL_S: '60',
    });
    await agent.waitFor('agent_started');
    return { id, tunnelPort, apiPort, accessLog, core, agent, proxy, coreConfig: config };
  }

  /** A server of the link: what a client app takes from each `vless://` URI. */
  interface LinkServer {
    id: string;
    host: string;
    port: number;
  }

  async function linkOf(user: TestUser): Promise<string> {
    const response = await t.http().get('/api/v1/users/me/devices').set(user.bearer).expect(200);
    return new URL(response.body.subscription_url as string).pathname;
  }

  /** Fetches the link as an app, as base64 `vless://` URIs; the servers, by node port. */
  async function fetchLink(linkPath: string, hwid: string): Promise<Map<number, LinkServer>> {
    const answer = await t
      .http()
      .get(linkPath)
      .set('User-Agent', 'v2rayNG/1.8.5')
      .set('x-hwid', hwid)
      .expect(200);
    const servers = new Map<number, LinkServer>();
    for (const line of Buffer.from(answer.text, 'base64').toString('utf8').split('\n')) {
      const uri = new URL(line);
      servers.set(Number(uri.port), {
        id: uri.username,
        host: uri.hostname,
        port: Number(uri.port),
      });
    }
    return servers;
  }

  /** A subscriber's v2ray client to `server`, its connections made from `from`; its SOCKS port. */
  async function client(server: LinkServer, from = '127.0.0.1'): Promise<number> {
    const socksPort = await freePort();
    const config = {
      log: { loglevel: 'warning' },
      inbounds: [
        { listen: '127.0.0.1', port: socksPort, protocol: 'socks', settings: { udp: false } },
      ],
      outbounds: [
        {
          protocol: 'vless',
          sendThrough: from,
          settings: {
            vnext: [
              {
                address: server.host,
                port: server.port,
                users: [{ id: server.id, encryption: 'none' }],
              },
            ],
          },
        },
      ],
    };
    const started = runV2ray(dir, `client-${clients.length}`, config);
    clients.push(started);
    await waitForPort(socksPort);
    return socksPort;
  }

  const get = (socksPort: number, route: string, options: Parameters<typeof socksGet>[2] = {}) =>
    socksGet(
      socksPort,
      { host: '127.0.0.1', port: destinationPort, path: route },
      { timeoutMs: 20_000, ...options },
    );

  /** Tries `/hello` until it answers; the time it took from `since`. */
  async function connectsWithin(
    socksPort: number,
    since: number,
    boundMs = PROPAGATION_MS,
  ): Promise<number> {
    for (;;) {
      // Done once the answer is in: a tunnel may hold a closed connection open a while longer.
      const answer = await get(socksPort, '/hello', { timeoutMs: 2_000, idleMs: 200 });
      if (answer.status === 200) return Date.now() - since;
      if (Date.now() - since > boundMs + 2_000) throw new Error('the device never connected');
      await sleep(100);
    }
  }

  /** Whether `/hello` is refused, tried until `boundMs` from `since`; the time it took. */
  async function refusedWithin(
    socksPort: number,
    since: number,
    boundMs = PROPAGATION_MS,
  ): Promise<number> {
    for (;;) {
      const answer = await get(socksPort, '/hello', { timeoutMs: 2_000, idleMs: 200 });
      if (answer.status !== 200) return Date.now() - since;
      if (Date.now() - since > boundMs + 2_000) throw new Error('the device still connects');
      await sleep(100);
    }
  }

  /** A running download; `stopped` resolves when bytes stop coming for a second. */
  function stream(socksPort: number): { progress: () => number; done: Promise<Fetched> } {
    let bytes = 0;
    const done = get(socksPort, '/stream', {
      timeoutMs: 60_000,
      idleMs: 1_000,
      onProgress: (count) => (bytes = count),
    });
    return { progress: () => bytes, done };
  }

  async function streaming(download: { progress: () => number }): Promise<void> {
    await waitFor(
      () => Promise.resolve(download.progress() > 64 * 1024),
      10_000,
      'the download to start',
    );
  }

  const me = async (user: TestUser) =>
    (await t.http().get('/api/v1/users/me').set(user.bearer).expect(200)).body as {
      traffic: { used_bytes: number };
    };

  const devicesOf = async (user: TestUser) =>
    (await t.http().get('/api/v1/users/me/devices').set(user.bearer).expect(200)).body.devices as {
      id: string;
      bytes_up: number;
      bytes_down: number;
      shared_suspected: boolean;
      address_hint: string | null;
    }[];

  it('a device made by a fetch connects within 5 s, and its bytes are counted once for the user and the device', async () => {
    const user = await subscribedUser(t);
    const linkPath = await linkOf(user);
    const fetchedAt = Date.now();
    const servers = await fetchLink(linkPath, 'first-phone-01');
    expect(servers.size).toBe(2);
    const server = servers.get(nodes[0].tunnelPort)!;
    const socksPort = await client(server);
    expect(await connectsWithin(socksPort, fetchedAt)).toBeLessThan(PROPAGATION_MS);

    const download = await get(socksPort, '/payload');
    expect(download).toMatchObject({ status: 200, complete: true });
    // A report period or two later, the user and the device have the same bytes, counted once.
    await waitFor(
      async () => {
        const [device] = await devicesOf(user);
        return device.bytes_down >= PAYLOAD && (await me(user)).traffic.used_bytes >= PAYLOAD;
      },
      REPORT_INTERVAL_S * 1000 * 4,
      'the report',
    );
    await sleep(REPORT_INTERVAL_S * 1000 * 2);
    const [device] = await devicesOf(user);
    const used = (await me(user)).traffic.used_bytes;
    expect(device.bytes_up + device.bytes_down).toBe(used);
    // What crossed the tunnel: the payload and its headers, both ways, and no more than a few KB.
    expect(used).toBeGreaterThan(PAYLOAD);
    expect(used).toBeLessThan(PAYLOAD + 64 * 1024);
    expect(device.address_hint).toBe('127.0.0.x');
  });

  it('a removed device stops within 5 s: its running download ends and a new connection is refused', async () => {
    const user = await subscribedUser(t);
    const servers = await fetchLink(await linkOf(user), 'removed-phone-1');
    const socksPort = await client(servers.get(nodes[0].tunnelPort)!);
    await connectsWithin(socksPort, Date.now());
    const download = stream(socksPort);
    await streaming(download);
    const [device] = await devicesOf(user);
    const removedAt = Date.now();
    await t.http().delete(`/api/v1/users/me/devices/${device.id}`).set(user.bearer).expect(204);
    const ended = await download.done;
    expect(ended.lastDataAt - removedAt).toBeLessThan(PROPAGATION_MS);
    expect(await refusedWithin(socksPort, removedAt)).toBeLessThan(PROPAGATION_MS + 2_000);
  });

  it('a blocked account and one that used up its traffic stop within 5 s', async () => {
    for (const stop of ['block', 'used up'] as const) {
      const user = await subscribedUser(t);
      const servers = await fetchLink(await linkOf(user), `stopped-${stop.replace(' ', '-')}`);
      const socksPort = await client(servers.get(nodes[0].tunnelPort)!);
      await connectsWithin(socksPort, Date.now());
      const download = stream(socksPort);
      await streaming(download);
      const admin = `/api/v1/admin/users/${user.user.id}`;
      let stoppedAt = Date.now();
      if (stop === 'block') {
        await t
          .http()
          .post(`${admin}/block`)
          .set(owner.bearer)
          .send({ reason: 'abuse' })
          .expect(200);
      } else {
        // A limit just above what is used: the stream crosses it within the next report.
        const used = (await me(user)).traffic.used_bytes;
        await t
          .http()
          .patch(`${admin}/traffic-limit`)
          .set(owner.bearer)
          .send({ traffic_limit_bytes: used + 1024 * 1024 })
          .expect(200);
        await waitFor(
          async () => (await me(user)).traffic.used_bytes >= used + 1024 * 1024,
          REPORT_INTERVAL_S * 1000 * 4,
          'the limit to be reached',
        );
        stoppedAt = Date.now();
      }
      const ended = await download.done;
      expect(ended.lastDataAt - stoppedAt).toBeLessThan(PROPAGATION_MS);
      expect(await refusedWithin(socksPort, stoppedAt)).toBeLessThan(PROPAGATION_MS + 2_000);
    }
  });

  it('an expired subscription’s device stops at its end, with the service away', async () => {
    const user = await newUser(t, 'seed', {
      planName: 'monthly',
      subscriptionExpiresAt: new Date(Date.now() + 60_000),
    });
    const servers = await fetchLink(await linkOf(user), 'expiring-phone');
    const socksPort = await client(servers.get(nodes[0].tunnelPort)!);
    await connectsWithin(socksPort, Date.now());
    // The subscription now ends in 6 s; the node learns of the new end, then the service goes away.
    const endsAt = Date.now() + 6_000;
    const mark = nodes[0].agent.lines.length;
    await t.dataSource.query(`UPDATE users SET subscription_expires_at = $2 WHERE id = $1`, [
      user.user.id,
      new Date(endsAt),
    ]);
    await nodes[0].agent.waitFor(
      'credentials_synced',
      (line) => nodes[0].agent.lines.indexOf(line) >= mark,
      PROPAGATION_MS,
    );
    nodes[0].proxy.mode = 'down';
    try {
      const download = stream(socksPort);
      await streaming(download);
      const ended = await download.done;
      expect(ended.lastDataAt).toBeGreaterThan(endsAt - 1_000);
      expect(ended.lastDataAt - endsAt).toBeLessThan(2_000);
      expect(await refusedWithin(socksPort, endsAt, 2_000)).toBeLessThan(4_000);
    } finally {
      nodes[0].proxy.mode = 'pass';
    }
  });

  it('after a core restart, three devices work again within 5 s of the core’s return', async () => {
    const user = await subscribedUser(t);
    const linkPath = await linkOf(user);
    const ports: number[] = [];
    for (const hwid of ['restart-phone-1', 'restart-phone-2', 'restart-phone-3']) {
      const servers = await fetchLink(linkPath, hwid);
      ports.push(await client(servers.get(nodes[1].tunnelPort)!));
    }
    for (const port of ports) await connectsWithin(port, Date.now());
    const node = nodes[1];
    await node.core.stop();
    node.core = runV2ray(dir, 'node-1-core-again', node.coreConfig);
    await waitForCoreApi(`127.0.0.1:${node.apiPort}`);
    const back = Date.now();
    const took = await Promise.all(ports.map((port) => connectsWithin(port, back)));
    for (const ms of took) expect(ms).toBeLessThan(PROPAGATION_MS);
  });

  it('with the service away, a node keeps admitting its devices and counting; the bytes are reported once', async () => {
    const user = await subscribedUser(t);
    const servers = await fetchLink(await linkOf(user), 'away-phone-01');
    const socksPort = await client(servers.get(nodes[0].tunnelPort)!);
    await connectsWithin(socksPort, Date.now());
    await waitFor(async () => (await me(user)).traffic.used_bytes > 0, 10_000, 'the first report');
    await sleep(REPORT_INTERVAL_S * 1000 * 2);
    const before = (await me(user)).traffic.used_bytes;
    nodes[0].proxy.mode = 'down';
    let during = 0;
    try {
      const awayUntil = Date.now() + SERVICE_AWAY_MS;
      while (Date.now() < awayUntil) {
        const answer = await get(socksPort, '/payload');
        expect(answer).toMatchObject({ status: 200, complete: true });
        during += answer.bytes;
        await sleep(Math.min(20_000, Math.max(0, awayUntil - Date.now())));
      }
      expect((await me(user)).traffic.used_bytes).toBe(before);
    } finally {
      nodes[0].proxy.mode = 'pass';
    }
    // The agent retries a report with a backoff of up to 30 s (agent.ts), which two minutes
    // away reach: the bytes come at its next try after the service is back.
    await waitFor(
      async () => (await me(user)).traffic.used_bytes >= before + during,
      30_000 + REPORT_INTERVAL_S * 1000 * 10,
      'the bytes of the outage',
    );
    await sleep(REPORT_INTERVAL_S * 1000 * 3);
    const after = (await me(user)).traffic.used_bytes;
    // Counted once: the payloads and their requests, not twice that.
    expect(after - before).toBeGreaterThanOrEqual(during);
    expect(after - before).toBeLessThan(during + 64 * 1024);
  });

  it('one address per device: on a node, the newest address wins; two devices of a user both work', async () => {
    const user = await subscribedUser(t);
    const linkPath = await linkOf(user);
    const server = (await fetchLink(linkPath, 'shared-phone-1')).get(nodes[0].tunnelPort)!;
    const first = await client(server, '127.0.0.2');
    await connectsWithin(first, Date.now());
    const download = stream(first);
    await streaming(download);
    const second = await client(server, '127.0.0.3');
    const switchedAt = Date.now();
    expect(await connectsWithin(second, switchedAt)).toBeLessThan(PROPAGATION_MS);
    const ended = await download.done;
    expect(ended.lastDataAt - switchedAt).toBeLessThan(PROPAGATION_MS);

    // Another device of the same user, from another address: both keep working.
    const other = (await fetchLink(linkPath, 'second-phone-2')).get(nodes[0].tunnelPort)!;
    const third = await client(other, '127.0.0.4');
    await connectsWithin(third, Date.now());
    const a = stream(second);
    const b = stream(third);
    await streaming(a);
    await streaming(b);
    const start = [a.progress(), b.progress()];
    await sleep(3_000);
    expect(a.progress()).toBeGreaterThan(start[0]);
    expect(b.progress()).toBeGreaterThan(start[1]);
  });

  it('across two nodes, the older address’s connection closes within one report period', async () => {
    const user = await subscribedUser(t);
    const servers = await fetchLink(await linkOf(user), 'roaming-phone-1');
    const onA = await client(servers.get(nodes[0].tunnelPort)!, '127.0.0.5');
    await connectsWithin(onA, Date.now());
    const download = stream(onA);
    await streaming(download);
    // Reported as online on node A first.
    await sleep(REPORT_INTERVAL_S * 1000 + 500);
    const onB = await client(servers.get(nodes[1].tunnelPort)!, '127.0.0.6');
    const movedAt = Date.now();
    await connectsWithin(onB, movedAt);
    const keep = stream(onB);
    await streaming(keep);
    const ended = await download.done;
    // Node B reports the newer address, node A's next report is told to close it.
    expect(ended.lastDataAt - movedAt).toBeLessThan(REPORT_INTERVAL_S * 1000 * 2 + 2_000);
    const still = keep.progress();
    await sleep(1_500);
    expect(keep.progress()).toBeGreaterThan(still);
    const [device] = await devicesOf(user);
    expect(device.address_hint).toBe('127.0.0.x');
  });
});
