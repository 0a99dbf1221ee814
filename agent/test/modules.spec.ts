import { createHmac, randomUUID } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ConnectionCloser } from '../src/connections';
import { CoreClient, CoreRefused } from '../src/core-client';
import { deviceEmail, parseEmail } from '../src/emails';
import { checkNudge, nudgeMac } from '../src/nudge';
import { usage } from '../src/reporter';
import { emailUser, sessionEmail } from '../src/sessions';
import { loadAgentSettings } from '../src/settings';
import { FakeCore } from './fake-core';
import { tempDir } from './helpers';

const REQUIRED = {
  VPN_API_URL: 'https://api.example.test/api/v1/',
  VPN_NODE_ID: '6F1C0A52-8C57-4E37-9D53-0D8C5E0C2B11',
  VPN_NODE_SECRET: 'node-secret',
  CORE_API: '/run/xray/api.sock',
  CORE_INBOUND_TAG: 'vless-reality',
  TLS_CERT: '/etc/vpn-node-agent/admission.crt',
  TLS_KEY: '/etc/vpn-node-agent/admission.key',
};

describe('agent settings', () => {
  it('reads the contract’s settings with their defaults', () => {
    expect(loadAgentSettings(REQUIRED)).toEqual({
      apiUrl: 'https://api.example.test/api/v1',
      nodeId: '6f1c0a52-8c57-4e37-9d53-0d8c5e0c2b11',
      nodeSecret: 'node-secret',
      coreApi: '/run/xray/api.sock',
      corePrefix: 'xray',
      coreInboundTag: 'vless-reality',
      coreAccessLog: '',
      tunnelPort: 0,
      flow: '',
      admissionHost: '0.0.0.0',
      admissionPort: 8443,
      tlsCert: '/etc/vpn-node-agent/admission.crt',
      tlsKey: '/etc/vpn-node-agent/admission.key',
      journalDir: '/var/lib/vpn-node-agent',
      reportIntervalS: 60,
      limitsIntervalS: 60,
      sessionIdleS: 1800,
      maxSessionsPerUser: 5,
      credentialsPollS: 60,
    });
  });

  it('names every setting that is missing or wrong, at once', () => {
    expect(() =>
      loadAgentSettings({
        ...REQUIRED,
        VPN_API_URL: 'ftp://x',
        VPN_NODE_ID: 'node-1',
        VPN_NODE_SECRET: '',
        CORE_API_PREFIX: 'v2ray',
        REPORT_INTERVAL_S: '0',
        MAX_SESSIONS_PER_USER: '2.5',
      }),
    ).toThrow(
      'VPN_API_URL must be an http(s) URL; VPN_NODE_ID must be a UUID; ' +
        'CORE_API_PREFIX must be xray or v2ray.core; VPN_NODE_SECRET is required; REPORT_INTERVAL_S must be a whole number from 1 to 86400; ' +
        'MAX_SESSIONS_PER_USER must be a whole number from 1 to 100',
    );
  });
});

describe.each(['xray', 'v2ray.core'] as const)('core client, %s prefix', (prefix) => {
  let core: FakeCore;
  let client: CoreClient;

  beforeAll(async () => {
    core = new FakeCore(prefix, 'tunnel');
    await core.start();
    client = new CoreClient(core.address, prefix, 'tunnel');
  });
  afterAll(async () => {
    client.close();
    await core.stop();
  });

  it('adds and removes VLESS users by email; twice is refused as the core does', async () => {
    const id = randomUUID();
    await client.addUser('u.0', id, 'xtls-rprx-vision');
    expect(core.users.get('u.0')).toEqual({ id, flow: 'xtls-rprx-vision' });
    await expect(client.addUser('u.0', randomUUID(), '')).rejects.toBeInstanceOf(CoreRefused);
    await client.removeUser('u.0');
    expect(core.users.has('u.0')).toBe(false);
    await expect(client.removeUser('u.0')).rejects.toBeInstanceOf(CoreRefused);
  });

  it('reads user counters without resetting them, beyond 2^32, and the uptime', async () => {
    await client.addUser('big.1', randomUUID(), '');
    core.carry('big.1', 5_000_000_000, 7);
    const first = await client.userCounters();
    expect(first.get('big.1')).toEqual({ up: 5_000_000_000, down: 7 });
    expect(await client.userCounters()).toEqual(first);
    expect(await client.uptime()).toBeGreaterThanOrEqual(3_600);
  });

  it('a core that is down is an error, not a refusal', async () => {
    core.down = true;
    try {
      const failure = client.uptime();
      await expect(failure).rejects.toThrow();
      await expect(failure).rejects.not.toBeInstanceOf(CoreRefused);
    } finally {
      core.down = false;
    }
  });
});

describe('report arithmetic', () => {
  it('sums a user’s slots, skips what did not move, and counts a counter that went down from zero', () => {
    const a = randomUUID();
    const b = randomUUID();
    const counters = new Map([
      [sessionEmail(a, 0), { up: 100, down: 1_000 }],
      [sessionEmail(a, 1), { up: 5, down: 50 }],
      [sessionEmail(b, 0), { up: 3, down: 30 }],
      ['not-ours', { up: 9, down: 9 }],
    ]);
    const base = {
      [sessionEmail(a, 0)]: [40, 400] as [number, number],
      [sessionEmail(b, 0)]: [3, 300] as [number, number],
    };
    expect(usage(counters, base)).toEqual({
      entries: [
        { user_id: a, bytes_up: 65, bytes_down: 650 },
        { user_id: b, bytes_up: 0, bytes_down: 30 },
      ],
      moved: [sessionEmail(a, 0), sessionEmail(a, 1), sessionEmail(b, 0)],
    });
    expect(emailUser(sessionEmail(a, 3))).toBe(a);
    expect(emailUser('not-ours')).toBeNull();
  });
});

describe('device emails, reports and nudges', () => {
  it('names a device’s core user by its user and device, and reads both back', () => {
    const user = randomUUID();
    const device = randomUUID();
    expect(deviceEmail(user, device)).toBe(`${user}.d.${device}`);
    expect(deviceEmail(user, device)).toHaveLength(75);
    expect(parseEmail(deviceEmail(user, device))).toEqual({ userId: user, deviceId: device });
    expect(parseEmail(sessionEmail(user, 4))).toEqual({ userId: user, slot: 4 });
    expect(emailUser(deviceEmail(user, device))).toBe(user);
    for (const other of ['not-ours', `${user}.x.${device}`, `${user}.d.`, `.3`, `${user}.d.a.b`]) {
      expect({ other, owner: parseEmail(other) }).toEqual({ other, owner: null });
    }
  });

  it('sums a user’s sessions and devices, and splits the devices’ share per device', () => {
    const user = randomUUID();
    const phone = randomUUID();
    const laptop = randomUUID();
    const counters = new Map([
      [sessionEmail(user, 0), { up: 100, down: 1_000 }],
      [deviceEmail(user, phone), { up: 30, down: 300 }],
      [deviceEmail(user, laptop), { up: 7, down: 70 }],
    ]);
    const base = { [deviceEmail(user, phone)]: [10, 100] as [number, number] };
    expect(usage(counters, base).entries).toEqual([
      {
        user_id: user,
        bytes_up: 127,
        bytes_down: 1_270,
        devices: [
          { device_id: phone, bytes_up: 20, bytes_down: 200 },
          { device_id: laptop, bytes_up: 7, bytes_down: 70 },
        ],
      },
    ]);
  });

  it('checks a nudge’s mac: HMAC-SHA256 of credentials-nudge:<node>:<version> keyed by the secret', () => {
    const node = randomUUID();
    const secret = 'a node secret';
    const mac = createHmac('sha256', secret).update(`credentials-nudge:${node}:42`).digest('hex');
    expect(nudgeMac(secret, node, 42)).toBe(mac);
    expect(checkNudge({ node_id: node, version: 42, mac }, secret, node)).toEqual({
      ok: true,
      version: 42,
    });
    expect(
      checkNudge({ node_id: node, version: 42, mac: mac.toUpperCase() }, secret, node),
    ).toEqual({ ok: true, version: 42 });
    const forbidden = { ok: false, status: 403, reason: 'forbidden' };
    expect(checkNudge({ node_id: node, version: 43, mac }, secret, node)).toEqual(forbidden);
    expect(checkNudge({ node_id: node, version: 42, mac }, 'other', node)).toEqual(forbidden);
    expect(checkNudge({ node_id: node, version: 42, mac }, secret, randomUUID())).toEqual(
      forbidden,
    );
    const bad = { ok: false, status: 400, reason: 'bad_request' };
    for (const body of [
      null,
      [],
      'x',
      { node_id: node, version: '42', mac },
      { version: 42, mac },
    ]) {
      expect(checkNudge(body, secret, node)).toEqual(bad);
    }
  });
});

describe('one address per device, from the access log', () => {
  it('closes the connections of a device’s older address when it connects from a new one', async () => {
    const log = path.join(tempDir('access-unit'), 'access.log');
    writeFileSync(log, '');
    const killed: string[][] = [];
    const closer = new ConnectionCloser(
      log,
      443,
      () => undefined,
      (endpoints) => {
        killed.push([...endpoints]);
        return Promise.resolve(endpoints.length);
      },
      () => Promise.resolve(new Set(['198.51.100.7:2000', '[2001:db8::5]:4000'])),
    );
    await closer.start();
    const user = randomUUID();
    const device = deviceEmail(user, randomUUID());
    const session = sessionEmail(user, 0);
    const line = (from: string, email: string) =>
      `2026/11/27 10:00:00 ${from} accepted tcp:example.com:443 [vless-reality >> direct] email: ${email}\n`;
    appendFileSync(log, line('203.0.113.9:1000', device) + line('203.0.113.9:1001', device));
    appendFileSync(log, line('203.0.113.50:3000', session));
    await closer.catchUp();
    expect(killed).toEqual([]);

    // Xray 1.8 writes "from"; the newest address wins.
    appendFileSync(log, line('from 198.51.100.7:2000', device));
    await closer.catchUp();
    expect(killed).toEqual([['203.0.113.9:1000', '203.0.113.9:1001']]);
    expect(closer.devices.switches).toBe(1);

    // Another connection from the same address closes nothing; a session is never tracked.
    appendFileSync(log, line('198.51.100.7:2001', device) + line('203.0.113.51:3001', session));
    await closer.catchUp();
    expect(killed).toHaveLength(1);

    // Only the connection `ss` still sees open (or just accepted) counts as online.
    const online = await closer.online();
    expect(online).toEqual([
      {
        device_id: parseEmail(device)!.deviceId,
        address: '198.51.100.7',
        since: expect.any(String),
      },
    ]);

    // A removed device: its remaining connections close.
    expect(await closer.close(device)).toBe(2);
    expect(killed.at(-1)).toEqual(['198.51.100.7:2000', '198.51.100.7:2001']);
  });
});
