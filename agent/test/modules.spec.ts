import { randomUUID } from 'node:crypto';
import { CoreClient, CoreRefused } from '../src/core-client';
import { usage } from '../src/reporter';
import { emailUser, sessionEmail } from '../src/sessions';
import { loadAgentSettings } from '../src/settings';
import { FakeCore } from './fake-core';

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
