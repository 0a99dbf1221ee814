import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';

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

/** Which tunnel core a config is for: Xray on nodes; Debian's V2Ray 4.x (no REALITY) in tests. */
export type CoreKind = 'xray' | 'v2ray';

export interface CoreNode {
  /** The tunnel host (a name or a literal address): the node's own address, blocked. */
  host: string;
  tunnelPort: number;
  /** REALITY (Xray only). */
  sniDomain: string;
  shortIds: string[];
  realityPrivateKey: string;
}

export interface CoreOptions {
  core: CoreKind;
  /** Address of the tunnel inbound (default all interfaces). */
  listen?: string;
  /** Xray: the unix socket its API listens on (default XRAY_API_SOCKET). */
  apiSocket?: string;
  /** V2Ray (no unix-socket API): the loopback TCP port of its API (default V2RAY_API_PORT). */
  apiPort?: number;
  /**
   * The core's access log (each accepted connection with its client address and user email):
   * where the agent finds a session's open connections to close them. Unset: none is written.
   */
  accessLog?: string;
}

/** Where Xray's API listens on a node: a unix socket in its runtime directory (systemd's). */
export const XRAY_API_SOCKET = '/run/xray/api.sock';
/** The API port of a V2Ray core (loopback only; also sent to `block` from the tunnel). */
export const V2RAY_API_PORT = 10085;
/** The tag of the VLESS inbound the agent adds users to (its CORE_INBOUND_TAG). */
export const TUNNEL_INBOUND_TAG = 'vless-in';
export const API_TAG = 'api';
export const BLOCK_TAG = 'block';

/**
 * Destinations a subscriber must never reach through the tunnel: the ranges of `geoip:private`
 * (this host, private networks, carrier-grade NAT, loopback, link-local, benchmarking, multicast
 * and reserved), written out so that the rule needs no geoip.dat and reads the same on both cores,
 * and the IPv6 prefixes that carry an IPv4 address, since a node with NAT64, a 6to4 relay or Teredo
 * would deliver them to any IPv4 address, a cloud's metadata service included (a cost: public IPv4
 * through those prefixes is refused too). IPv4-mapped addresses (`::ffff:0:0/96`) need no range of
 * their own: both cores turn them into IPv4 before matching, and refuse a mapped CIDR in a rule.
 */
export const BLOCKED_NETWORKS: readonly string[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/96', // unspecified, loopback and the deprecated IPv4-compatible form
  '64:ff9b::/96', // NAT64 (RFC 6052)
  '64:ff9b:1::/48', // local-use NAT64 (RFC 8215)
  '2001::/32', // Teredo
  '2002::/16', // 6to4
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
];

export interface RoutingRule {
  type: 'field';
  outboundTag: string;
  inboundTag?: string[];
  ip?: string[];
  domain?: string[];
  port?: string;
}

/**
 * The rules that send to `block` what a subscriber must not reach: private, loopback and
 * link-local networks (plus `geoip:private` on Xray, which ships geoip.dat), the node's own
 * address, and the core's API port when it has one. Domains are resolved before these are
 * matched (`IPIfNonMatch` in `coreConfig`), so a name pointing inward is blocked too.
 */
export function blockRules(node: Pick<CoreNode, 'host'>, options: CoreOptions): RoutingRule[] {
  const family = isIP(node.host);
  const ips = [...(options.core === 'xray' ? ['geoip:private'] : []), ...BLOCKED_NETWORKS];
  if (family !== 0) ips.push(`${node.host}/${family === 4 ? 32 : 128}`);
  const rules: RoutingRule[] = [{ type: 'field', ip: ips, outboundTag: BLOCK_TAG }];
  if (family === 0)
    rules.push({ type: 'field', domain: [`full:${node.host}`], outboundTag: BLOCK_TAG });
  if (options.core === 'v2ray') {
    rules.push({
      type: 'field',
      port: String(options.apiPort ?? V2RAY_API_PORT),
      outboundTag: BLOCK_TAG,
    });
  }
  return rules;
}

/**
 * The core's configuration on a node: one VLESS inbound on the tunnel port (with REALITY,
 * camouflaged as the node's SNI, on Xray; plain TCP on V2Ray, which has no REALITY), the API with
 * per-user counters (a unix socket on Xray, loopback on V2Ray), and routing that sends the API
 * inbound to the API and everything in `blockRules` to a blackhole. Users are not listed: the
 * node agent adds each one through the API once the service has validated its session token.
 * A pure function: the agent's end-to-end test derives its V2Ray config from it.
 */
export function coreConfig(node: CoreNode, options: CoreOptions): Record<string, unknown> {
  const xray = options.core === 'xray';
  const apiInbound = xray
    ? { listen: options.apiSocket ?? XRAY_API_SOCKET }
    : { listen: '127.0.0.1', port: options.apiPort ?? V2RAY_API_PORT };
  return {
    log:
      options.accessLog === undefined
        ? { loglevel: 'warning' }
        : { loglevel: 'warning', access: options.accessLog },
    api: { tag: API_TAG, services: ['HandlerService', 'StatsService'] },
    stats: {},
    policy: { levels: { '0': { statsUserUplink: true, statsUserDownlink: true } } },
    inbounds: [
      {
        tag: TUNNEL_INBOUND_TAG,
        listen: options.listen ?? '0.0.0.0',
        port: node.tunnelPort,
        protocol: 'vless',
        settings: { clients: [], decryption: 'none' },
        streamSettings: xray
          ? {
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
            }
          : { network: 'tcp', security: 'none' },
        sniffing: { enabled: true, destOverride: xray ? ['http', 'tls', 'quic'] : ['http', 'tls'] },
      },
      {
        tag: API_TAG,
        ...apiInbound,
        protocol: 'dokodemo-door',
        settings: { address: '127.0.0.1' },
      },
    ],
    outbounds: [
      // UseIP: the core resolves names itself (cached), so it connects where routing looked.
      { tag: 'direct', protocol: 'freedom', settings: { domainStrategy: 'UseIP' } },
      { tag: BLOCK_TAG, protocol: 'blackhole' },
    ],
    routing: {
      domainStrategy: 'IPIfNonMatch',
      rules: [
        { type: 'field', inboundTag: [API_TAG], outboundTag: API_TAG },
        ...blockRules(node, options),
      ],
    },
  };
}

/**
 * Xray's access log on a node: in its runtime directory (memory, readable by the group `xray`), so
 * the record of who connected from where never reaches a disk; provision.sh has it rotated.
 */
export const XRAY_ACCESS_LOG = '/run/xray/access.log';

/** Where the agent's files live on a node (deploy/node/provision.sh installs them there). */
export const AGENT_FILES = {
  tlsCert: '/etc/vpn-node-agent/tls.crt',
  tlsKey: '/etc/vpn-node-agent/tls.key',
  journalDir: '/var/lib/vpn-node-agent',
} as const;

export interface AgentTarget {
  nodeId: string;
  publicApiUrl: string;
  /** The node's own secret (never INTERNAL_SECRET): it speaks only for this node. */
  nodeSecret: string;
  admissionPort: number;
  tunnelPort: number;
  /** The VLESS flow of every user the agent adds (the node's `tunnel_flow`). */
  tunnelFlow: string;
}

/**
 * The node agent's environment file: the contract's agent settings, and three the agent reads
 * beyond them (`CORE_ACCESS_LOG` and `TUNNEL_PORT`, to close an ended session's connections;
 * `VPN_FLOW`, the flow it gives users and answers). Holds the node's secret: uploaded through stdin
 * with mode 0600.
 */
export function agentSettings(target: AgentTarget): string {
  return [
    `VPN_API_URL=${target.publicApiUrl}/api/v1`,
    `VPN_NODE_ID=${target.nodeId}`,
    `VPN_NODE_SECRET=${target.nodeSecret}`,
    `CORE_API=${XRAY_API_SOCKET}`,
    'CORE_API_PREFIX=xray',
    `CORE_INBOUND_TAG=${TUNNEL_INBOUND_TAG}`,
    `CORE_ACCESS_LOG=${XRAY_ACCESS_LOG}`,
    `TUNNEL_PORT=${target.tunnelPort}`,
    `VPN_FLOW=${target.tunnelFlow}`,
    'ADMISSION_HOST=0.0.0.0',
    `ADMISSION_PORT=${target.admissionPort}`,
    `TLS_CERT=${AGENT_FILES.tlsCert}`,
    `TLS_KEY=${AGENT_FILES.tlsKey}`,
    `JOURNAL_DIR=${AGENT_FILES.journalDir}`,
    'REPORT_INTERVAL_S=60',
    'LIMITS_INTERVAL_S=60',
    'SESSION_IDLE_S=1800',
    'MAX_SESSIONS_PER_USER=5',
    '',
  ].join('\n');
}
