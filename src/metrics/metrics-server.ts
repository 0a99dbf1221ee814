import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { Metrics } from './metrics.service';

/**
 * `GET /metrics` on a listener of its own (METRICS_HOST:METRICS_PORT), never on the public port;
 * with METRICS_TOKEN set, only for `Authorization: Bearer <token>`, compared in constant time.
 */
@Injectable()
export class MetricsServer implements OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server: Server | null = null;
  private readonly tokenDigest: Buffer | null;

  constructor(
    private readonly metrics: Metrics,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.tokenDigest = settings.metricsToken ? sha256(settings.metricsToken) : null;
  }

  /** Starts listening unless METRICS_PORT=0; resolves to the bound port (null when off). */
  async start(): Promise<number | null> {
    if (this.settings.metricsPort === 0 || this.server) return this.port();
    const server = createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.settings.metricsPort, this.settings.metricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics on http://${this.settings.metricsHost}:${this.port()}/metrics`);
    return this.port();
  }

  port(): number | null {
    return this.server ? (this.server.address() as AddressInfo).port : null;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return plain(res, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return plain(res, 405, 'method not allowed\n');
    if (!this.authorized(req.headers.authorization)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return plain(res, 401, 'unauthorized\n');
    }
    try {
      const body = await this.metrics.registry.metrics();
      res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (error) {
      this.logger.error({ err: error }, 'metrics could not be rendered');
      plain(res, 500, 'metrics unavailable\n');
    }
  }

  private authorized(header: string | undefined): boolean {
    if (!this.tokenDigest) return true;
    const match = /^Bearer (.+)$/.exec(header ?? '');
    // Digests of equal length, so the comparison takes the same time whatever was sent.
    return match !== null && timingSafeEqual(sha256(match[1]), this.tokenDigest);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}
