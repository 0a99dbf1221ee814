import { isIPv6 } from 'node:net';
import { stringify } from 'yaml';
import type { ClientFormat } from './client-formats';

/** One server of a subscription: a node with the device's VLESS id, or the "nothing" entry. */
export interface SubscriptionEntry {
  name: string;
  host: string;
  port: number;
  vlessId: string;
  /** Null for the entry that connects nowhere (no REALITY, nothing to reach). */
  reality: { publicKey: string; shortId: string; sni: string; flow: string } | null;
}

/** What an app is sent: the body and its content type. */
export interface RenderedSubscription {
  body: string;
  contentType: string;
}

/** The entry that says why there is nothing to connect to, and connects nowhere. */
export function explanatoryEntry(message: string): SubscriptionEntry {
  return {
    name: message,
    host: '0.0.0.0',
    port: 1,
    vlessId: '00000000-0000-0000-0000-000000000000',
    reality: null,
  };
}

const FINGERPRINT = 'chrome';
const PROBE_URL = 'https://www.gstatic.com/generate_204';

export function render(
  format: ClientFormat,
  entries: SubscriptionEntry[],
  title: string,
): RenderedSubscription {
  switch (format) {
    case 'base64':
      return {
        body: Buffer.from(entries.map(vlessUri).join('\n'), 'utf8').toString('base64'),
        contentType: 'text/plain; charset=utf-8',
      };
    case 'xray-json':
      return { body: JSON.stringify(entries.map(xrayConfig)), contentType: 'application/json' };
    case 'mihomo':
      return { body: mihomoConfig(entries, title), contentType: 'text/yaml; charset=utf-8' };
    case 'sing-box':
      return { body: JSON.stringify(singBoxConfig(entries)), contentType: 'application/json' };
  }
}

/** `vless://<id>@<host>:<port>?…#<name>`, every part percent-encoded. */
export function vlessUri(entry: SubscriptionEntry): string {
  const query = new URLSearchParams({ encryption: 'none', type: 'tcp' });
  if (entry.reality) {
    query.set('security', 'reality');
    query.set('pbk', entry.reality.publicKey);
    query.set('sid', entry.reality.shortId);
    query.set('sni', entry.reality.sni);
    query.set('fp', FINGERPRINT);
    if (entry.reality.flow) query.set('flow', entry.reality.flow);
  } else {
    query.set('security', 'none');
  }
  const host = isIPv6(entry.host) ? `[${entry.host}]` : entry.host;
  return `vless://${entry.vlessId}@${host}:${entry.port}?${query}#${encodeURIComponent(entry.name)}`;
}

/** A complete Xray client config for one server: local SOCKS and HTTP, private ranges direct. */
function xrayConfig(entry: SubscriptionEntry): object {
  const user: Record<string, string> = { id: entry.vlessId, encryption: 'none' };
  if (entry.reality?.flow) user.flow = entry.reality.flow;
  return {
    remarks: entry.name,
    log: { loglevel: 'warning' },
    inbounds: [
      {
        tag: 'socks',
        listen: '127.0.0.1',
        port: 10808,
        protocol: 'socks',
        settings: { udp: true },
        sniffing: { enabled: true, destOverride: ['http', 'tls', 'quic'] },
      },
      { tag: 'http', listen: '127.0.0.1', port: 10809, protocol: 'http' },
    ],
    outbounds: [
      {
        tag: 'proxy',
        protocol: 'vless',
        settings: { vnext: [{ address: entry.host, port: entry.port, users: [user] }] },
        streamSettings: entry.reality
          ? {
              network: 'tcp',
              security: 'reality',
              realitySettings: {
                serverName: entry.reality.sni,
                fingerprint: FINGERPRINT,
                publicKey: entry.reality.publicKey,
                shortId: entry.reality.shortId,
              },
            }
          : { network: 'tcp', security: 'none' },
      },
      { tag: 'direct', protocol: 'freedom' },
      { tag: 'block', protocol: 'blackhole' },
    ],
    routing: {
      domainStrategy: 'IPIfNonMatch',
      rules: [{ type: 'field', ip: ['geoip:private'], outboundTag: 'direct' }],
    },
  };
}

/** Names made unique (apps key servers by name), in order. */
function uniqueNames(entries: SubscriptionEntry[]): string[] {
  const seen = new Map<string, number>();
  return entries.map((entry) => {
    const count = (seen.get(entry.name) ?? 0) + 1;
    seen.set(entry.name, count);
    return count === 1 ? entry.name : `${entry.name} (${count})`;
  });
}

/** Clash Meta (mihomo) YAML: a `vless` proxy per server, a select and a url-test group. */
function mihomoConfig(entries: SubscriptionEntry[], title: string): string {
  const names = uniqueNames(entries);
  const proxies = entries.map((entry, i) => ({
    name: names[i],
    type: 'vless',
    server: entry.host,
    port: entry.port,
    uuid: entry.vlessId,
    network: 'tcp',
    udp: true,
    ...(entry.reality
      ? {
          tls: true,
          ...(entry.reality.flow ? { flow: entry.reality.flow } : {}),
          servername: entry.reality.sni,
          'client-fingerprint': FINGERPRINT,
          'reality-opts': {
            'public-key': entry.reality.publicKey,
            'short-id': entry.reality.shortId,
          },
        }
      : { tls: false }),
  }));
  const auto = 'Auto';
  return stringify({
    'mixed-port': 7890,
    'allow-lan': false,
    mode: 'rule',
    'log-level': 'warning',
    proxies,
    'proxy-groups': [
      { name: title, type: 'select', proxies: [auto, ...names] },
      { name: auto, type: 'url-test', proxies: names, url: PROBE_URL, interval: 300 },
    ],
    rules: [`MATCH,${title}`],
  });
}

/** sing-box JSON: a `vless` outbound per server, a selector and a urltest, a local mixed inbound. */
function singBoxConfig(entries: SubscriptionEntry[]): object {
  const tags = uniqueNames(entries);
  return {
    log: { level: 'warn' },
    inbounds: [{ type: 'mixed', tag: 'mixed-in', listen: '127.0.0.1', listen_port: 2080 }],
    outbounds: [
      { type: 'selector', tag: 'select', outbounds: ['auto', ...tags], default: 'auto' },
      { type: 'urltest', tag: 'auto', outbounds: tags, url: PROBE_URL, interval: '3m' },
      ...entries.map((entry, i) => ({
        type: 'vless',
        tag: tags[i],
        server: entry.host,
        server_port: entry.port,
        uuid: entry.vlessId,
        ...(entry.reality
          ? {
              ...(entry.reality.flow ? { flow: entry.reality.flow } : {}),
              tls: {
                enabled: true,
                server_name: entry.reality.sni,
                utls: { enabled: true, fingerprint: FINGERPRINT },
                reality: {
                  enabled: true,
                  public_key: entry.reality.publicKey,
                  short_id: entry.reality.shortId,
                },
              },
            }
          : {}),
      })),
      { type: 'direct', tag: 'direct' },
    ],
    route: { rules: [{ ip_is_private: true, outbound: 'direct' }], final: 'select' },
  };
}
