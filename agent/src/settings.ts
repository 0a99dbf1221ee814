import type { CorePrefix } from './core-schema';

/** The agent's settings, read once from the environment (the node's environment file). */
export interface AgentSettings {
  /** The service's base URL including `/api/v1`, without a trailing slash. */
  apiUrl: string;
  nodeId: string;
  nodeSecret: string;
  /** A unix socket path or `host:port`. */
  coreApi: string;
  corePrefix: CorePrefix;
  coreInboundTag: string;
  /** The core's access log, read to find a session's open connections (empty: not closed). */
  coreAccessLog: string;
  /** The core's tunnel port: only sockets on it are closed (0: any socket of the peer address). */
  tunnelPort: number;
  /** The VLESS flow given to every user added to the core (`xtls-rprx-vision` on Xray). */
  flow: string;
  admissionHost: string;
  admissionPort: number;
  tlsCert: string;
  tlsKey: string;
  journalDir: string;
  reportIntervalS: number;
  limitsIntervalS: number;
  sessionIdleS: number;
  maxSessionsPerUser: number;
  /** How often the node's device credentials are fetched when no nudge came. */
  credentialsPollS: number;
}

export class SettingsError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function loadAgentSettings(env: NodeJS.ProcessEnv): AgentSettings {
  const problems: string[] = [];
  const text = (name: string, fallback?: string): string => {
    const value = env[name]?.trim() || fallback;
    if (value === undefined) {
      problems.push(`${name} is required`);
      return '';
    }
    return value;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };

  const apiUrl = text('VPN_API_URL').replace(/\/+$/, '');
  if (apiUrl && !/^https?:\/\/[^/]+/.test(apiUrl))
    problems.push('VPN_API_URL must be an http(s) URL');
  const nodeId = text('VPN_NODE_ID');
  if (nodeId && !UUID.test(nodeId)) problems.push('VPN_NODE_ID must be a UUID');
  const corePrefix = text('CORE_API_PREFIX', 'xray');
  if (corePrefix !== 'xray' && corePrefix !== 'v2ray.core') {
    problems.push('CORE_API_PREFIX must be xray or v2ray.core');
  }
  const settings: AgentSettings = {
    apiUrl,
    nodeId: nodeId.toLowerCase(),
    nodeSecret: text('VPN_NODE_SECRET'),
    coreApi: text('CORE_API'),
    corePrefix: corePrefix as CorePrefix,
    coreInboundTag: text('CORE_INBOUND_TAG'),
    coreAccessLog: env.CORE_ACCESS_LOG?.trim() ?? '',
    tunnelPort: integer('TUNNEL_PORT', 0, 0, 65535),
    flow: env.VPN_FLOW?.trim() ?? '',
    admissionHost: text('ADMISSION_HOST', '0.0.0.0'),
    admissionPort: integer('ADMISSION_PORT', 8443, 0, 65535),
    tlsCert: text('TLS_CERT'),
    tlsKey: text('TLS_KEY'),
    journalDir: text('JOURNAL_DIR', '/var/lib/vpn-node-agent'),
    reportIntervalS: integer('REPORT_INTERVAL_S', 60, 1, 86_400),
    limitsIntervalS: integer('LIMITS_INTERVAL_S', 60, 1, 86_400),
    sessionIdleS: integer('SESSION_IDLE_S', 1800, 1, 30 * 86_400),
    maxSessionsPerUser: integer('MAX_SESSIONS_PER_USER', 5, 1, 100),
    credentialsPollS: integer('CREDENTIALS_POLL_S', 60, 1, 86_400),
  };
  if (problems.length > 0) throw new SettingsError(problems.join('; '));
  return settings;
}
