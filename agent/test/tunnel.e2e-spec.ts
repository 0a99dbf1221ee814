import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { startBillingWorld, type BillingWorld } from '../../test/fakes/billing';
import { tonShop } from '../../test/fakes/ton-purchase';
import type { TestApp } from '../../test/harness/app';
import { newUser, savePlan, type TestUser } from '../../test/harness/factories';
import { createNode, nodeSecret, tcpListener, waitFor } from '../../test/harness/nodes';
import { freePort } from '../../test/harness/processes';
import { SecretBox } from '../../src/common/secret-box';
import { coreConfig, TUNNEL_INBOUND_TAG } from '../../src/nodes/reality';
import { CoreClient } from '../src/core-client';
import { admit, spawnAgent, tlsFiles, tempDir, type AgentProcess, type TlsFiles } from './helpers';
import {
  clientConfig,
  requireV2ray,
  runV2ray,
  socksGet,
  waitForCoreApi,
  waitForPort,
  type V2rayProcess,
} from './v2ray';

const PAYLOAD = 10 * 1024 * 1024;
const REPORT_INTERVAL_S = 2;
/** What one report cycle (read, journal, POST) may take beyond its period on a loaded machine. */
const CYCLE_SLACK_MS = 2_500;

// Several v2ray processes, a 10 MB download and a core restart: more than the default 30 s on a
// loaded machine.
jest.setTimeout(90_000);

/**
 * The real tunnel: the service, the built agent, Debian's v2ray as the node's core and a second
 * v2ray as the subscriber's client, a local HTTP server as the destination. Nothing in the path is
 * a fake but the blockchain. AGENT_TEST_DEBUG=1 prints the agent's log and the core's access log.
 */
describe('a subscriber who pays gets through a real node, and every byte is counted once', () => {
  let world: BillingWorld;
  let t: TestApp;
  let owner: TestUser;
  let buyer: TestUser;
  let dir: string;
  let tls: TlsFiles;
  let nodeId: string;
  let core: V2rayProcess;
  let coreApi: CoreClient;
  let agent: AgentProcess;
  let accessLog: string;
  let apiPort: number;
  let tunnelPort: number;
  let destination: http.Server;
  let destinationPort: number;
  const clients: V2rayProcess[] = [];

  beforeAll(async () => {
    requireV2ray();
    dir = tempDir('tunnel');
    world = await startBillingWorld({ USD: '2.5' });
    t = world.t;
    owner = await newUser(t, 'owner');
    await savePlan(t, owner, { prices: { TON: '1000000000', USD: '499' } });

    destination = http.createServer((request, response) => {
      if (request.url === '/payload') {
        response.writeHead(200, { 'content-length': PAYLOAD });
        response.end(Buffer.alloc(PAYLOAD, 7));
      } else if (request.url === '/stream') {
        // 64 KB every 10 ms until the connection closes, and never longer than 60 s.
        response.writeHead(200);
        const started = Date.now();
        const timer = setInterval(() => {
          if (Date.now() - started > 60_000) {
            clearInterval(timer);
            response.end();
          } else response.write(Buffer.alloc(64 * 1024, 1));
        }, 10);
        response.on('close', () => clearInterval(timer));
      } else {
        response.writeHead(200, { 'content-length': 5 });
        response.end('hello');
      }
    });
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    destinationPort = (destination.address() as AddressInfo).port;

    apiPort = await freePort();
    tunnelPort = await freePort();
    accessLog = path.join(dir, 'access.log');
    // The test's own destination is allowed by one rule that only the test adds, before the rest.
    const allowDestination = {
      type: 'field',
      ip: ['127.0.0.1'],
      port: String(destinationPort),
      outboundTag: 'direct',
    };
    // The core config the service writes for a node, in V2Ray's dialect (no REALITY), with the
    // access log the agent reads; the test's destination is allowed by one rule before the rest.
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
    config.routing.rules.splice(1, 0, allowDestination);
    core = runV2ray(dir, 'core', config);
    await waitForCoreApi(`127.0.0.1:${apiPort}`);
    coreApi = new CoreClient(`127.0.0.1:${apiPort}`, 'v2ray.core', TUNNEL_INBOUND_TAG);

    // The node as the service makes it: its admission certificate and sealed key, its own secret.
    const admissionPort = await freePort();
    nodeId = (
      await createNode(t, owner, { tunnel_port: tunnelPort, admission_port: admissionPort })
    ).id;
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [nodeId],
    );
    const [made] = (await t.dataSource.query(
      `SELECT admission_cert_pem, admission_key_enc, admission_cert_sha256 FROM nodes WHERE id = $1`,
      [nodeId],
    )) as {
      admission_cert_pem: string;
      admission_key_enc: string;
      admission_cert_sha256: string;
    }[];
    tls = tlsFiles(
      dir,
      made.admission_cert_pem,
      new SecretBox(t.settings.dataEncryptionKey).open(made.admission_key_enc),
      made.admission_cert_sha256,
    );
    agent = spawnAgent({
      VPN_API_URL: `${t.baseUrl}/api/v1`,
      VPN_NODE_ID: nodeId,
      VPN_NODE_SECRET: await nodeSecret(t, nodeId),
      CORE_API: `127.0.0.1:${apiPort}`,
      CORE_API_PREFIX: 'v2ray.core',
      CORE_INBOUND_TAG: TUNNEL_INBOUND_TAG,
      CORE_ACCESS_LOG: accessLog,
      TUNNEL_PORT: String(tunnelPort),
      ADMISSION_HOST: '127.0.0.1',
      ADMISSION_PORT: String(admissionPort),
      TLS_CERT: tls.cert,
      TLS_KEY: tls.key,
      JOURNAL_DIR: path.join(dir, 'journal'),
      REPORT_INTERVAL_S: String(REPORT_INTERVAL_S),
      LIMITS_INTERVAL_S: '60',
      SESSION_IDLE_S: '600',
      MAX_SESSIONS_PER_USER: '1',
    });
    await agent.waitFor('agent_started');
  }, 120_000);

  afterAll(async () => {
    if (process.env.AGENT_TEST_DEBUG) {
      console.error(JSON.stringify(agent?.lines, null, 1));
      console.error(readFileSync(accessLog, 'utf8'));
    }
    await agent?.stop();
    for (const client of clients) await client.stop();
    await core?.stop();
    coreApi?.close();
    await new Promise((resolve) => destination?.close(resolve));
    await world?.close();
  });

  /** The subscriber's v2ray client for `id`; its SOCKS port. */
  async function client(id: string): Promise<number> {
    const socksPort = await freePort();
    const started = runV2ray(
      dir,
      `client-${clients.length}`,
      clientConfig(socksPort, tunnelPort, id),
    );
    clients.push(started);
    await waitForPort(socksPort);
    return socksPort;
  }

  const get = (socksPort: number, route: string, host = '127.0.0.1', port = destinationPort) =>
    socksGet(socksPort, { host, port, path: route }, { timeoutMs: 20_000 });

  async function routingEntry(user: TestUser) {
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const entries = response.body as {
      node_id: string;
      session_token: string;
      tunnel_host: string;
      tunnel_port: number;
      admission_url: string;
      admission_cert_sha256: string;
    }[];
    return entries.find((entry) => entry.node_id === nodeId)!;
  }

  async function used(userId: string): Promise<number> {
    const response = await t
      .http()
      .get(`/api/v1/internal/limits?user_ids=${userId}`)
      .set({ 'X-Internal-Secret': t.settings.internalSecret })
      .expect(200);
    return (response.body as { traffic_used_bytes: number }[])[0].traffic_used_bytes;
  }

  /** All bytes the core counted for this user, over every slot. */
  async function coreCounted(userId: string): Promise<number> {
    let sum = 0;
    for (const [email, { up, down }] of await coreApi.userCounters()) {
      if (email.startsWith(`${userId}.`)) sum += up + down;
    }
    return sum;
  }

  let vlessId: string;

  it('refuses a client the agent has not admitted', async () => {
    const socksPort = await client(randomUUID());
    const fetched = await get(socksPort, '/payload');
    expect(fetched).toMatchObject({ status: null, bytes: 0 });
  });

  it('a user signs up, pays, is admitted and downloads 10 MB; one period later it is counted exactly', async () => {
    buyer = await newUser(t, 'seed');
    await tonShop(world).buy(buyer, 'monthly', 'TON');
    const entry = await routingEntry(buyer);
    expect(entry).toMatchObject({
      tunnel_host: '127.0.0.1',
      tunnel_port: tunnelPort,
      admission_cert_sha256: tls.sha256,
    });

    // The app trusts the agent's certificate by the routing entry's SHA-256 alone.
    const admitted = await admit(
      entry.admission_url,
      { certPem: tls.certPem, sha256: entry.admission_cert_sha256 },
      { session_token: entry.session_token },
    );
    expect(admitted.status).toBe(201);
    vlessId = admitted.body.vless_id as string;
    const socksPort = await client(vlessId);
    const fetched = await get(socksPort, '/payload');
    expect(fetched).toMatchObject({ status: 200, bytes: PAYLOAD, complete: true });

    const waited = await waitFor(
      async () => (await used(buyer.user.id)) === (await coreCounted(buyer.user.id)),
      REPORT_INTERVAL_S * 1000 + CYCLE_SLACK_MS,
      'the report of the download',
    );
    const counted = await used(buyer.user.id);
    expect({ counted, waited }).toEqual({ counted: await coreCounted(buyer.user.id), waited });
    expect(Math.abs(counted - PAYLOAD) / PAYLOAD).toBeLessThan(0.01);
  });

  it('through the tunnel the core API, another loopback port and a private address are blocked', async () => {
    const socksPort = await client(vlessId);
    const other = await tcpListener();
    other.server.removeAllListeners('connection');
    other.server.on('connection', (socket) => socket.end('HTTP/1.0 200 OK\r\n\r\nsecret'));
    try {
      const targets = [
        { host: '127.0.0.1', port: apiPort },
        { host: '127.0.0.1', port: other.port },
        { host: '10.255.255.1', port: 80 },
      ];
      for (const target of targets) {
        const fetched = await get(socksPort, '/', target.host, target.port);
        expect({ target, fetched }).toMatchObject({ target, fetched: { status: null, bytes: 0 } });
      }
      // The core routed each to its blocking outbound (and the allowed destination still works).
      expect((await get(socksPort, '/hello')).status).toBe(200);
      const log = readFileSync(accessLog, 'utf8');
      for (const target of targets) {
        expect(log).toContain(`accepted tcp:${target.host}:${target.port} [block]`);
      }
    } finally {
      await other.close();
    }
  });

  it('a new session of the user ends the old one: its open download stops, its client is refused', async () => {
    const oldSocks = await client(vlessId);
    const running = socksGet(
      oldSocks,
      { host: '127.0.0.1', port: destinationPort, path: '/stream' },
      { timeoutMs: 30_000, idleMs: 3_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const entry = await routingEntry(buyer);
    const admitted = await admit(entry.admission_url, tls, { session_token: entry.session_token });
    const admittedAt = Date.now();
    expect(admitted.status).toBe(201);
    const ended = await running;
    expect(ended).toMatchObject({ status: 200, complete: false });
    // The node closed the connection when the new session replaced the old one.
    expect(ended.lastDataAt - admittedAt).toBeLessThan(1_000);
    expect(await get(oldSocks, '/hello')).toMatchObject({ status: null, bytes: 0 });

    vlessId = admitted.body.vless_id as string;
    const newSocks = await client(vlessId);
    expect(await get(newSocks, '/hello')).toMatchObject({ status: 200, complete: true });
  });

  it('the core restarts during a download: the session is added again and counting goes on', async () => {
    const socksPort = await client(vlessId);
    const running = socksGet(
      socksPort,
      { host: '127.0.0.1', port: destinationPort, path: '/stream' },
      { timeoutMs: 30_000, idleMs: 3_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, (REPORT_INTERVAL_S + 1) * 1000));
    const countedBefore = await used(buyer.user.id);
    // What the core had counted the moment before it died; the agent read at most this much.
    const coreAtCrash = await coreCounted(buyer.user.id);
    core.child.kill('SIGKILL');
    await core.stop();
    const interrupted = await running;
    expect(interrupted).toMatchObject({ status: 200, complete: false });
    core = runV2ray(dir, 'core', JSON.parse(readFileSync(core.config, 'utf8')) as object);
    await waitForCoreApi(`127.0.0.1:${apiPort}`);
    await agent.waitFor('sessions_restored', (line) => line.sessions === 1 && line.added === 1);
    // The same VLESS id works again, and what it carries is counted from the new core's zero.
    const after = await get(socksPort, '/payload');
    expect(after).toMatchObject({ status: 200, bytes: PAYLOAD, complete: true });
    // One period later everything the new core counted is in, on top of what the old one's last
    // read gave: the bytes the old core counted after that read died with it, and only those.
    await new Promise((resolve) => setTimeout(resolve, REPORT_INTERVAL_S * 1000 + CYCLE_SLACK_MS));
    const sinceRestart = await coreCounted(buyer.user.id);
    const countedOfOldCore = (await used(buyer.user.id)) - sinceRestart;
    const missing = coreAtCrash - countedOfOldCore;
    // The stream runs at most 6.4 MB/s; between our read and the kill it moved a few KB at most.
    const onePeriodOfStream = 6.6e6 * (REPORT_INTERVAL_S + CYCLE_SLACK_MS / 1000);
    expect({
      sinceRestartCounted: sinceRestart >= PAYLOAD,
      keptWhatWasReported: countedOfOldCore >= countedBefore,
      missingAtMostOnePeriod: missing > -1e6 && missing <= onePeriodOfStream,
      missing,
    }).toEqual({
      sinceRestartCounted: true,
      keptWhatWasReported: true,
      missingAtMostOnePeriod: true,
      missing,
    });
  });

  it('going over the limit during a long download stops it within one report period', async () => {
    const socksPort = await client(vlessId);
    const before = await used(buyer.user.id);
    const coreBefore = await coreCounted(buyer.user.id);
    const allowance = 4 * 1024 * 1024;
    await t.dataSource.query(`UPDATE users SET traffic_limit_bytes = $2 WHERE id = $1`, [
      buyer.user.id,
      before + allowance,
    ]);
    let crossedAt = 0;
    const fetched = await socksGet(
      socksPort,
      { host: '127.0.0.1', port: destinationPort, path: '/stream' },
      {
        timeoutMs: 30_000,
        idleMs: 3_000,
        onProgress: (bytes) => {
          if (!crossedAt && bytes > allowance) crossedAt = Date.now();
        },
      },
    );
    expect(fetched.status).toBe(200);
    expect(crossedAt).toBeGreaterThan(0);
    const stoppedAfterMs = fetched.lastDataAt - crossedAt;
    expect(stoppedAfterMs).toBeLessThanOrEqual(REPORT_INTERVAL_S * 1000 + CYCLE_SLACK_MS);
    await agent.waitFor('session_ended', (line) => line.cause === 'over_limit');
    expect(await get(socksPort, '/hello')).toMatchObject({ status: null, bytes: 0 });
    // Every byte the core counted, the ones after the limit too, is counted once.
    await waitFor(
      async () =>
        (await used(buyer.user.id)) - before === (await coreCounted(buyer.user.id)) - coreBefore,
      REPORT_INTERVAL_S * 1000 + CYCLE_SLACK_MS,
      'the last report',
    );
  });
});
