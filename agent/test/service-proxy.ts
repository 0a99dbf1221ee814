import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyMode =
  /** Forward every request. */
  | 'pass'
  /** Take a traffic report and never forward or answer it (the agent is killed meanwhile). */
  | 'hold-report'
  /** Forward a traffic report, and never pass the service's answer back. */
  | 'swallow-answer'
  /** The service is away: every request is refused with 503. */
  | 'down';

export interface SeenReport {
  report_id: string;
  entries: { user_id: string; bytes_up: number; bytes_down: number }[];
  /** The service's answer, when it was forwarded and answered. */
  answer?: { applied: boolean; over_limit: string[] };
}

/**
 * A local stand-in for the network between a node and the service, in front of the real service:
 * it forwards, or holds a report, or drops the service's answer, or refuses everything, so that a
 * test can kill the agent at exactly those points.
 */
export class ServiceProxy {
  mode: ProxyMode = 'pass';
  readonly reports: SeenReport[] = [];
  private server!: http.Server;
  private readonly held = new Set<http.ServerResponse>();
  private waiters: (() => void)[] = [];

  constructor(private readonly upstream: string) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => void this.handle(request, Buffer.concat(chunks), response));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  /** Resolves when the proxy has seen `count` reports in all. */
  async reportsSeen(count: number, timeoutMs = 15_000): Promise<SeenReport> {
    const deadline = Date.now() + timeoutMs;
    while (this.reports.length < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.reports.length} reports seen`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return this.reports[count - 1];
  }

  async close(): Promise<void> {
    for (const response of this.held) response.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(
    request: http.IncomingMessage,
    body: Buffer,
    response: http.ServerResponse,
  ): Promise<void> {
    const isReport = request.method === 'POST' && request.url?.endsWith('/internal/traffic');
    const mode = this.mode;
    if (mode === 'down') {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end('{"code":"UPSTREAM_UNAVAILABLE"}');
      return;
    }
    let seen: SeenReport | undefined;
    if (isReport) {
      seen = JSON.parse(body.toString('utf8')) as SeenReport;
      seen = { report_id: seen.report_id, entries: seen.entries };
      this.reports.push(seen);
    }
    if (isReport && mode === 'hold-report') {
      this.held.add(response);
      this.wake();
      return;
    }
    const answer = await this.forward(request, body);
    if (seen && answer.status === 200) {
      seen.answer = JSON.parse(answer.body.toString('utf8')) as SeenReport['answer'];
    }
    this.wake();
    if (isReport && mode === 'swallow-answer') {
      this.held.add(response);
      return;
    }
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body);
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  private forward(
    request: http.IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: http.OutgoingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const upstream = http.request(
        new URL(request.url ?? '/', this.upstream),
        {
          method: request.method,
          headers: { ...request.headers, host: new URL(this.upstream).host },
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () =>
            resolve({
              status: answer.statusCode ?? 502,
              headers: { 'content-type': answer.headers['content-type'] ?? 'application/json' },
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
      upstream.on('error', reject);
      upstream.end(body);
    });
  }
}
