import * as http from 'node:http';
import * as https from 'node:https';
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

  async traffic(report: Report): Promise<TrafficAnswer> {
    const answer = (await this.request('POST', '/internal/traffic', {
      node_id: this.nodeId,
      report_id: report.report_id,
      entries: report.entries,
    })) as Partial<TrafficAnswer>;
    return { applied: answer.applied === true, over_limit: answer.over_limit ?? [] };
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
