import { createPrivateKey, createPublicKey } from 'node:crypto';
import { generateRealityKeys, generateShortIds, proxySettings, xrayConfig } from './reality';

describe('REALITY parameters and the Xray config written to a node', () => {
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

  it('a VLESS inbound with REALITY on the tunnel port, camouflaged as the SNI', () => {
    const config = xrayConfig({
      tunnelPort: 8443,
      sniDomain: 'www.camouflage.test',
      shortIds: ['0123456789abcdef', 'fedcba9876543210'],
      realityPrivateKey: 'cHJpdmF0ZS1rZXktb2YtdGhpcy1ub2RlLTMyLWJ5dGVz',
    }) as {
      inbounds: Record<string, unknown>[];
      outbounds: { protocol: string }[];
    };
    const tunnel = config.inbounds.find((inbound) => inbound.port === 8443)!;
    expect(tunnel).toMatchObject({
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
          privateKey: 'cHJpdmF0ZS1rZXktb2YtdGhpcy1ub2RlLTMyLWJ5dGVz',
          shortIds: ['0123456789abcdef', 'fedcba9876543210'],
        },
      },
    });
    // Xray's API, where the proxy component adds users, listens on loopback only.
    const api = config.inbounds.find((inbound) => inbound.tag === 'api')!;
    expect(api.listen).toBe('127.0.0.1');
    expect(config.outbounds.map((o) => o.protocol)).toContain('freedom');
  });

  it('the proxy settings carry the vision flow, the service URL, the node id and the secret', () => {
    const text = proxySettings({
      nodeId: '6f1c7a52-0000-4000-8000-000000000001',
      publicApiUrl: 'https://api.example.test',
      internalSecret: 'internal-secret-value',
      tunnelFlow: 'xtls-rprx-vision',
    });
    expect(text.split('\n')).toEqual([
      'VPN_API_URL=https://api.example.test/api/v1',
      'VPN_NODE_ID=6f1c7a52-0000-4000-8000-000000000001',
      'VPN_INTERNAL_SECRET=internal-secret-value',
      'VPN_FLOW=xtls-rprx-vision',
      'XRAY_API=127.0.0.1:10085',
      '',
    ]);
  });
});
