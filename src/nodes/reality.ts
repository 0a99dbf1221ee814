import { generateKeyPairSync, randomBytes } from 'node:crypto';

export interface RealityKeys {
  /** base64url of the raw 32-byte x25519 keys, as `xray x25519` prints them. */
  publicKey: string;
  privateKey: string;
}

/** A fresh x25519 key pair for a node's REALITY inbound. */
export function generateRealityKeys(): RealityKeys {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  // A JWK's `x` and `d` are exactly the raw keys in base64url without padding.
  return { publicKey: pub.x!, privateKey: priv.d! };
}

/** REALITY short ids: hex of random bytes (8 bytes, the longest Xray accepts). */
export function generateShortIds(count = 2): string[] {
  return Array.from({ length: count }, () => randomBytes(8).toString('hex'));
}

export interface XrayNode {
  tunnelPort: number;
  sniDomain: string;
  shortIds: string[];
  realityPrivateKey: string;
}

/** Where the proxy component asks Xray to add and remove users (loopback only). */
export const XRAY_API_PORT = 10085;

/**
 * The Xray configuration written to a node: one VLESS inbound with REALITY on the tunnel port,
 * camouflaged as the node's SNI. Users are not listed here: the node's proxy component adds each
 * one through Xray's API (`api` inbound, loopback) once the service has validated its session
 * token, with the flow named in the proxy settings (`proxySettings`).
 */
export function xrayConfig(node: XrayNode): Record<string, unknown> {
  return {
    log: { loglevel: 'warning' },
    api: { tag: 'api', services: ['HandlerService', 'StatsService'] },
    stats: {},
    policy: { levels: { '0': { statsUserUplink: true, statsUserDownlink: true } } },
    inbounds: [
      {
        tag: 'vless-reality',
        listen: '0.0.0.0',
        port: node.tunnelPort,
        protocol: 'vless',
        settings: { clients: [], decryption: 'none' },
        streamSettings: {
          network: 'tcp',
          security: 'reality',
          realitySettings: {
            show: false,
            dest: `${node.sniDomain}:443`,
            xver: 0,
            serverNames: [node.sniDomain],
            privateKey: node.realityPrivateKey,
            shortIds: node.shortIds,
          },
        },
        sniffing: { enabled: true, destOverride: ['http', 'tls', 'quic'] },
      },
      {
        tag: 'api',
        listen: '127.0.0.1',
        port: XRAY_API_PORT,
        protocol: 'dokodemo-door',
        settings: { address: '127.0.0.1' },
      },
    ],
    outbounds: [
      { tag: 'direct', protocol: 'freedom' },
      { tag: 'block', protocol: 'blackhole' },
    ],
    routing: { rules: [{ type: 'field', inboundTag: ['api'], outboundTag: 'api' }] },
  };
}

export interface ProxyTarget {
  nodeId: string;
  publicApiUrl: string;
  internalSecret: string;
  tunnelFlow: string;
}

/**
 * The environment file of the node's proxy component: where and how it calls `/internal/*`, and
 * the flow it gives each user it adds to Xray. Holds the internal secret: written with mode 0600.
 */
export function proxySettings(target: ProxyTarget): string {
  return [
    `VPN_API_URL=${target.publicApiUrl}/api/v1`,
    `VPN_NODE_ID=${target.nodeId}`,
    `VPN_INTERNAL_SECRET=${target.internalSecret}`,
    `VPN_FLOW=${target.tunnelFlow}`,
    `XRAY_API=127.0.0.1:${XRAY_API_PORT}`,
    '',
  ].join('\n');
}
