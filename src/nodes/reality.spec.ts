import { createPrivateKey, createPublicKey } from 'node:crypto';
import {
  agentSettings,
  BLOCKED_NETWORKS,
  coreConfig,
  type CoreNode,
  generateRealityKeys,
  generateShortIds,
  type RoutingRule,
} from './reality';

interface Config {
  log: Record<string, string>;
  inbounds: Record<string, unknown>[];
  outbounds: { tag: string; protocol: string }[];
  routing: { domainStrategy: string; rules: RoutingRule[] };
}

const NODE: CoreNode = {
  host: '203.0.113.7',
  tunnelPort: 8443,
  sniDomain: 'www.camouflage.test',
  shortIds: ['0123456789abcdef', 'fedcba9876543210'],
  realityPrivateKey: 'cHJpdmF0ZS1rZXktb2YtdGhpcy1ub2RlLTMyLWJ5dGVz',
};

/** The outbound a rule list sends a destination to, matched as the cores do (first rule wins). */
function routeOf(config: Config, to: { ip?: string; domain?: string; port: number }): string {
  const inRange = (ip: string, cidr: string): boolean => {
    const [base, bits] = cidr.split('/');
    if (!base.includes('.') || !ip.includes('.')) return ip === base;
    const n = (a: string) => a.split('.').reduce((v, part) => v * 256 + Number(part), 0);
    const size = 2 ** (32 - Number(bits));
    return Math.floor(n(ip) / size) === Math.floor(n(base) / size);
  };
  for (const rule of config.routing.rules) {
    if (rule.inboundTag) continue;
    if (rule.ip && to.ip && rule.ip.some((cidr) => !cidr.includes(':') && inRange(to.ip!, cidr))) {
      return rule.outboundTag;
    }
    if (rule.domain && to.domain && rule.domain.includes(`full:${to.domain}`)) {
      return rule.outboundTag;
    }
    if (rule.port && Number(rule.port) === to.port) return rule.outboundTag;
  }
  return 'direct';
}

describe('REALITY parameters and the core config written to a node', () => {
  it('makes x25519 key pairs as Xray expects them (raw 32 bytes, base64url)', () => {
    const keys = generateRealityKeys();
    expect(keys.publicKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(keys.privateKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(keys.privateKey, 'base64url')).toHaveLength(32);
    // The public key is the private key's: derive it back through a PKCS#8 wrapper.
    const der = Buffer.concat([
      Buffer.from('302e020100300506032b656e04220420', 'hex'),
      Buffer.from(keys.privateKey, 'base64url'),
    ]);
    const derived = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
    expect(derived.export({ format: 'jwk' }).x).toBe(keys.publicKey);
    expect(generateRealityKeys().privateKey).not.toBe(keys.privateKey);
  });

  it('makes distinct hex short ids', () => {
    const ids = generateShortIds(2);
    expect(ids).toHaveLength(2);
    ids.forEach((id) => expect(id).toMatch(/^[0-9a-f]{16}$/));
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('Xray: a VLESS inbound with REALITY on the tunnel port, the API on a unix socket only', () => {
    const config = coreConfig(NODE, { core: 'xray' }) as unknown as Config;
    const tunnel = config.inbounds.find((inbound) => inbound.port === 8443)!;
    expect(tunnel).toMatchObject({
      tag: 'vless-in',
      listen: '0.0.0.0',
      protocol: 'vless',
      settings: { decryption: 'none', clients: [] },
      streamSettings: {
        network: 'tcp',
        security: 'reality',
        realitySettings: {
          show: false,
          dest: 'www.camouflage.test:443',
          serverNames: ['www.camouflage.test'],
          privateKey: NODE.realityPrivateKey,
          shortIds: NODE.shortIds,
        },
      },
    });
    const api = config.inbounds.find((inbound) => inbound.tag === 'api')!;
    expect(api).toMatchObject({ listen: '/run/xray/api.sock', protocol: 'dokodemo-door' });
    expect(api.port).toBeUndefined(); // no TCP port any local process could reach
    expect(config.log).toEqual({ loglevel: 'warning' });
    const logged = coreConfig(NODE, { core: 'xray', accessLog: '/run/xray/access.log' });
    expect(logged.log).toEqual({ loglevel: 'warning', access: '/run/xray/access.log' });
    expect(config.routing.rules[0]).toEqual({
      type: 'field',
      inboundTag: ['api'],
      outboundTag: 'api',
    });
  });

  it('Xray: private, loopback and link-local ranges and the node itself go to a blackhole', () => {
    const config = coreConfig(NODE, { core: 'xray' }) as unknown as Config;
    expect(config.outbounds.find((o) => o.tag === 'block')?.protocol).toBe('blackhole');
    // Names are resolved before the IP rules are matched: a name pointing inward is blocked too.
    expect(config.routing.domainStrategy).toBe('IPIfNonMatch');
    const ipRule = config.routing.rules.find((rule) => rule.ip)!;
    expect(ipRule.outboundTag).toBe('block');
    expect(ipRule.ip).toEqual(expect.arrayContaining(['geoip:private', '203.0.113.7/32']));
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254']) {
      expect({ ip, to: routeOf(config, { ip, port: 80 }) }).toEqual({ ip, to: 'block' });
    }
    for (const range of ['::1/128', 'fc00::/7', 'fe80::/10']) {
      const covered = BLOCKED_NETWORKS.some(
        (cidr) => cidr === range || (range === '::1/128' && cidr === '::/96'),
      );
      expect({ range, covered }).toEqual({ range, covered: true });
    }
    expect(routeOf(config, { ip: '203.0.113.7', port: 22 })).toBe('block');
    expect(routeOf(config, { ip: '1.1.1.1', port: 443 })).toBe('direct');
  });

  it('a node named by host name blocks that name; a V2Ray core blocks its API port', () => {
    const named = { ...NODE, host: 'node-1.example.com' };
    const xray = coreConfig(named, { core: 'xray' }) as unknown as Config;
    expect(routeOf(xray, { domain: 'node-1.example.com', port: 8443 })).toBe('block');
    expect(routeOf(xray, { domain: 'example.com', port: 443 })).toBe('direct');

    const v2ray = coreConfig(named, { core: 'v2ray', listen: '127.0.0.1', apiPort: 10099 });
    const config = v2ray as unknown as Config;
    const tunnel = config.inbounds.find((inbound) => inbound.tag === 'vless-in')!;
    expect(tunnel).toMatchObject({
      listen: '127.0.0.1',
      port: 8443,
      streamSettings: { network: 'tcp', security: 'none' },
    });
    expect(JSON.stringify(v2ray)).not.toMatch(/reality|geoip/);
    expect(config.inbounds.find((inbound) => inbound.tag === 'api')).toMatchObject({
      listen: '127.0.0.1',
      port: 10099,
    });
    expect(routeOf(config, { ip: '198.51.100.9', port: 10099 })).toBe('block');
    expect(routeOf(config, { ip: '127.0.0.1', port: 3000 })).toBe('block');
  });

  it("the agent's settings carry the node's own secret, never INTERNAL_SECRET", () => {
    const text = agentSettings({
      nodeId: '6f1c7a52-0000-4000-8000-000000000001',
      publicApiUrl: 'https://api.example.test',
      nodeSecret: 'node-secret-value',
      admissionPort: 9443,
      tunnelPort: 443,
      tunnelFlow: 'xtls-rprx-vision',
    });
    expect(text.split('\n')).toEqual([
      'VPN_API_URL=https://api.example.test/api/v1',
      'VPN_NODE_ID=6f1c7a52-0000-4000-8000-000000000001',
      'VPN_NODE_SECRET=node-secret-value',
      'CORE_API=/run/xray/api.sock',
      'CORE_API_PREFIX=xray',
      'CORE_INBOUND_TAG=vless-in',
      'CORE_ACCESS_LOG=/run/xray/access.log',
      'TUNNEL_PORT=443',
      'VPN_FLOW=xtls-rprx-vision',
      'ADMISSION_HOST=0.0.0.0',
      'ADMISSION_PORT=9443',
      'TLS_CERT=/etc/vpn-node-agent/tls.crt',
      'TLS_KEY=/etc/vpn-node-agent/tls.key',
      'JOURNAL_DIR=/var/lib/vpn-node-agent',
      'REPORT_INTERVAL_S=60',
      'LIMITS_INTERVAL_S=60',
      'SESSION_IDLE_S=1800',
      'MAX_SESSIONS_PER_USER=5',
      '',
    ]);
  });
});
