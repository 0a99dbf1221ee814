import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OnlineDevice } from '../src/addresses';
import type { TrafficEntry } from '../src/journal';
import type { CredentialChanges, WireCredential } from '../src/service-client';

export interface SeenTraffic {
  node_id: string;
  report_id: string;
  entries: TrafficEntry[];
  online?: OnlineDevice[];
}

/**
 * The service's `/internal/credentials` and `/internal/traffic` as a node sees them, with their
 * wire shapes: a versioned set of device credentials (changes kept, so `since` gets the changes
 * after it; `since` 0 or before the kept changes gets the full set), and traffic reports recorded
 * and answered with what the test puts in `overLimit` and `close` (each answered once).
 */
export class FakeService {
  version = 0;
  readonly devices = new Map<string, WireCredential>();
  /** Each version's change; versions up to `forgotten` are no longer kept. */
  private readonly changes = new Map<number, { upsert?: WireCredential; remove?: string }>();
  private forgotten = 0;
  readonly fetches: { since: number; at: number }[] = [];
  readonly reports: SeenTraffic[] = [];
  overLimit: string[] = [];
  close: string[] = [];
  /** Every request answered 503 (the service is away). */
  down = false;
  private server!: http.Server;

  constructor(
    private readonly nodeId: string,
    private readonly secret: string,
  ) {}

  /** The base URL as the agent's VPN_API_URL. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v1`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => this.handle(request, Buffer.concat(chunks), response));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  upsert(credential: WireCredential): number {
    this.version += 1;
    this.devices.set(credential.device_id, credential);
    this.changes.set(this.version, { upsert: credential });
    return this.version;
  }

  remove(deviceId: string): number {
    this.version += 1;
    this.devices.delete(deviceId);
    this.changes.set(this.version, { remove: deviceId });
    return this.version;
  }

  /** Replaces the set in one version that only a full answer gives (as after a large change). */
  replaceAll(credentials: readonly WireCredential[]): number {
    this.devices.clear();
    for (const credential of credentials) this.devices.set(credential.device_id, credential);
    this.version += 1;
    this.changes.clear();
    this.forgotten = this.version;
    return this.version;
  }

  private answer(since: number): CredentialChanges {
    if (since === 0 || since < this.forgotten || since > this.version) {
      return { version: this.version, full: true, upsert: [...this.devices.values()], remove: [] };
    }
    const upsert = new Map<string, WireCredential>();
    const remove = new Set<string>();
    for (let v = since + 1; v <= this.version; v += 1) {
      const change = this.changes.get(v);
      if (change?.upsert) {
        upsert.set(change.upsert.device_id, change.upsert);
        remove.delete(change.upsert.device_id);
      }
      if (change?.remove) {
        upsert.delete(change.remove);
        remove.add(change.remove);
      }
    }
    return {
      version: this.version,
      full: false,
      upsert: [...upsert.values()],
      remove: [...remove],
    };
  }

  private handle(request: http.IncomingMessage, body: Buffer, response: http.ServerResponse): void {
    const send = (status: number, value: unknown): void => {
      const text = JSON.stringify(value);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(text);
    };
    if (this.down) return send(503, { code: 'UPSTREAM_UNAVAILABLE' });
    if (request.headers['x-internal-secret'] !== this.secret)
      return send(401, { code: 'UNAUTHORIZED' });
    const url = new URL(request.url ?? '/', 'http://service');
    if (request.method === 'GET' && url.pathname === '/api/v1/internal/credentials') {
      if (url.searchParams.get('node_id') !== this.nodeId) return send(403, { code: 'FORBIDDEN' });
      const since = Number(url.searchParams.get('since'));
      this.fetches.push({ since, at: Date.now() });
      return send(200, this.answer(since));
    }
    if (request.method === 'POST' && url.pathname === '/api/v1/internal/traffic') {
      const report = JSON.parse(body.toString('utf8')) as SeenTraffic;
      if (report.node_id !== this.nodeId) return send(403, { code: 'FORBIDDEN' });
      const seen = this.reports.some((each) => each.report_id === report.report_id);
      this.reports.push(report);
      return send(200, {
        applied: !seen,
        over_limit: this.overLimit.splice(0),
        close: this.close.splice(0),
      });
    }
    if (request.method === 'GET' && url.pathname === '/api/v1/internal/limits') {
      const users = (url.searchParams.get('user_ids') ?? '').split(',').filter(Boolean);
      return send(
        200,
        users.map((user_id) => ({
          user_id,
          traffic_limit_bytes: 0,
          traffic_used_bytes: 0,
          active: true,
        })),
      );
    }
    send(404, { code: 'NOT_FOUND' });
  }
}
