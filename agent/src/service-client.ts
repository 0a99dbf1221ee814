import * as http from 'node:http';
import * as https from 'node:https';
import type { OnlineDevice } from './addresses';
import type { Report } from './journal';

export type Validation =
  | {
      valid: true;
      user_id: string;
      traffic_limit_bytes: number;
      traffic_used_bytes: number;
      expires_at: string | null;
    }
  | { valid: false; reason: string };

export interface TrafficAnswer {
  applied: boolean;
  over_limit: string[];
  /** Devices whose newest address is on another node: their connections here are closed. */
  close: string[];
}

/** A device credential as `GET /internal/credentials` sends it. */
export interface WireCredential {
  device_id: string;
  user_id: string;
  vless_id: string;
  expires_at: string | null;
}

/** `GET /internal/credentials`: the changes since a version, or the whole set (`full`). */
export interface CredentialChanges {
  version: number;
  full: boolean;
  upsert: WireCredential[];
  remove: string[];
}

export interface UserLimit {
  user_id: string;
  traffic_limit_bytes: number;
  traffic_used_bytes: number;
  active: boolean;
}

/** The service could not be reached, or answered something other than 2xx. */
export class ServiceUnavailable extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The strings of a list from the service; anything else in it is left out. */
function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}

/** The answer of `GET /internal/credentials` when it has the contract's shape, else null. */
function credentialChanges(value: unknown): CredentialChanges | null {
  if (typeof value !== 'object' || value === null) return null;
  const { version, full, upsert, remove } = value as Record<string, unknown>;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) return null;
  if (typeof full !== 'boolean' || !Array.isArray(upsert) || !Array.isArray(remove)) return null;
  const credentials: WireCredential[] = [];
  for (const item of upsert as unknown[]) {
    if (typeof item !== 'object' || item === null) return null;
    const { device_id, user_id, vless_id, expires_at } = item as Record<string, unknown>;
    if (
      typeof device_id !== 'string' ||
      typeof user_id !== 'string' ||
      typeof vless_id !== 'string' ||
      (expires_at != null && typeof expires_at !== 'string')
    ) {
      return null;
    }
    credentials.push({ device_id, user_id, vless_id, expires_at: expires_at ?? null });
  }
  if (!remove.every((item) => typeof item === 'string')) return null;
  return { version, full, upsert: credentials, remove: remove as string[] };
}

/** At most this many users in one GET /internal/limits (the contract's limit). */
export const LIMITS_BATCH = 1_000;
/**
 * An idle connection to the service is closed after this long. A node reports once a minute and
 * the service keeps connections for 65 s: kept open, every node of a fleet would hold one for
 * good, and a few thousand nodes would fill the service's HTTP_MAX_CONNECTIONS (2,000) with idle
 * sockets. Bursts of admissions still reuse the connection.
 */
export const SERVICE_IDLE_SOCKET_MS = 5_000;

/** The service's `/internal/*` routes, called with this node's secret. */
export class ServiceClient {
  private readonly agent: http.Agent;

  constructor(
    private readonly baseUrl: string,
    private readonly nodeId: string,
    private readonly secret: string,
    private readonly timeoutMs = 10_000,
  ) {
    const Agent = baseUrl.startsWith('https:') ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: SERVICE_IDLE_SOCKET_MS });
  }

  async validate(token: string): Promise<Validation> {
    return (await this.request('POST', '/internal/validate', {
      token,
      node_id: this.nodeId,
    })) as Validation;
  }

  /** `online` is not part of the journaled report: it says what is open at the time of sending. */
  async traffic(report: Report, online?: OnlineDevice[]): Promise<TrafficAnswer> {
    const answer = (await this.request('POST', '/internal/traffic', {
      node_id: this.nodeId,
      report_id: report.report_id,
      entries: report.entries,
      ...(online ? { online } : {}),
    })) as Partial<TrafficAnswer> | null;
    return {
      applied: answer?.applied === true,
      over_limit: strings(answer?.over_limit),
      close: strings(answer?.close),
    };
  }

  /** This node's device credentials changed since `since` (0: the whole set). */
  async credentials(since: number): Promise<CredentialChanges> {
    const query = `node_id=${encodeURIComponent(this.nodeId)}&since=${since}`;
    const answer = await this.request('GET', `/internal/credentials?${query}`);
    const changes = credentialChanges(answer);
    if (!changes) {
      throw new ServiceUnavailable('GET /internal/credentials: an answer of the wrong shape');
    }
    return changes;
  }

  async limits(userIds: readonly string[]): Promise<UserLimit[]> {
    const query = encodeURIComponent(userIds.join(','));
    return (await this.request('GET', `/internal/limits?user_ids=${query}`)) as UserLimit[];
  }

  close(): void {
    this.agent.destroy();
  }

  private request(method: string, route: string, body?: object): Promise<unknown> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const url = new URL(this.baseUrl + route);
    const send = url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const request = send(
        url,
        {
          method,
          agent: this.agent,
          timeout: this.timeoutMs,
          headers: {
            'X-Internal-Secret': this.secret,
            accept: 'application/json',
            ...(payload
              ? { 'content-type': 'application/json', 'content-length': payload.length }
              : {}),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', (error) => reject(new ServiceUnavailable(error.message)));
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            if (status < 200 || status >= 300) {
              reject(
                new ServiceUnavailable(
                  `${method} ${route}: ${status} ${text.slice(0, 200)}`,
                  status,
                ),
              );
              return;
            }
            try {
              resolve(JSON.parse(text));
            } catch {
              reject(
                new ServiceUnavailable(
                  `${method} ${route}: ${status} with a body that is not JSON`,
                  status,
                ),
              );
            }
          });
        },
      );
      request.on('timeout', () =>
        request.destroy(new Error(`timed out after ${this.timeoutMs} ms`)),
      );
      request.on('error', (error) =>
        reject(new ServiceUnavailable(`${method} ${route}: ${error.message}`)),
      );
      request.end(payload);
    });
  }
}
