import * as http2 from 'node:http2';
import * as net from 'node:net';
import {
  coreSchema,
  typed,
  type CoreMethod,
  type CorePrefix,
  type CoreSchema,
} from './core-schema';

/** Bytes a core user carried, as the core's counters say (never reset by the agent). */
export interface UserCounters {
  up: number;
  down: number;
}

/** The core refused an AlterInbound: an email added twice or removed when absent (gRPC UNKNOWN). */
export class CoreRefused extends Error {}

/** The core could not be reached or answered with a gRPC status other than OK and UNKNOWN. */
export class CoreUnavailable extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

/** gRPC's status UNKNOWN: what the cores answer when AlterInbound refuses an operation. */
const GRPC_UNKNOWN = 2;

const STAT = /^user>>>(.+)>>>traffic>>>(uplink|downlink)$/;

/**
 * The tunnel core's gRPC API (Xray, or V2Ray 4.x by its package prefix): add and remove VLESS users
 * on one inbound, read the per-user counters without resetting them, and the core's uptime (which
 * goes down when the core restarted and lost its API-added users and counters).
 *
 * Unary gRPC calls are made directly on one HTTP/2 connection (h2c, over TCP or a unix socket):
 * applying thousands of users after a core restart is thousands of calls, and a general gRPC
 * client's per-call machinery (interceptors, load balancing, a captured stack) took more than half
 * of the time, twice what these few lines take.
 */
export class CoreClient {
  private readonly schema: CoreSchema;
  private session: http2.ClientHttp2Session | null = null;
  private closed = false;

  constructor(
    private readonly address: string,
    prefix: CorePrefix,
    private readonly inboundTag: string,
    private readonly timeoutMs = 5_000,
  ) {
    this.schema = coreSchema(prefix);
  }

  async addUser(email: string, id: string, flow: string): Promise<void> {
    const account = typed(this.schema.vlessAccount, { id, flow, encryption: 'none' });
    const operation = typed(this.schema.addUser, { user: { level: 0, email, account } });
    await this.call(this.schema.alterInbound, { tag: this.inboundTag, operation });
  }

  async removeUser(email: string): Promise<void> {
    const operation = typed(this.schema.removeUser, { email });
    await this.call(this.schema.alterInbound, { tag: this.inboundTag, operation });
  }

  /** Every user counter the core has, by email. */
  async userCounters(): Promise<Map<string, UserCounters>> {
    const answer = await this.call(this.schema.queryStats, { pattern: 'user>>>', reset: false });
    const stats = (answer.stat ?? []) as { name: string; value: number | string }[];
    const counters = new Map<string, UserCounters>();
    for (const stat of stats) {
      const match = STAT.exec(stat.name);
      if (!match) continue;
      const email = match[1];
      const entry = counters.get(email) ?? { up: 0, down: 0 };
      if (match[2] === 'uplink') entry.up = Number(stat.value);
      else entry.down = Number(stat.value);
      counters.set(email, entry);
    }
    return counters;
  }

  /** Seconds since the core started. */
  async uptime(): Promise<number> {
    const answer = await this.call(this.schema.getSysStats, {});
    return Number(answer.Uptime ?? 0);
  }

  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = null;
  }

  /** The connection to the core, made again after it failed or the core went away. */
  private connection(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const address = this.address;
    const session = address.startsWith('/')
      ? http2.connect('http://localhost', { createConnection: () => net.connect(address) })
      : http2.connect(`http://${address}`);
    const forget = (): void => {
      if (this.session === session) this.session = null;
    };
    session.on('error', forget);
    session.on('goaway', forget);
    session.on('close', forget);
    // The connection does not keep the agent alive on its own.
    session.unref();
    this.session = session;
    return session;
  }

  private call(method: CoreMethod, request: object): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new CoreUnavailable('the core client is closed'));
    const message = method.request.encode(method.request.fromObject(request)).finish();
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    return new Promise((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.connection().request({
          ':method': 'POST',
          ':path': method.path,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-timeout': `${this.timeoutMs}m`,
        });
      } catch (error) {
        this.session = null;
        reject(new CoreUnavailable(`${method.path}: ${(error as Error).message}`));
        return;
      }
      const chunks: Buffer[] = [];
      let status: number | null = null;
      let details = '';
      let settled = false;
      const finish = (error: Error | null, answer?: Record<string, unknown>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(answer ?? {});
      };
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        finish(new CoreUnavailable(`${method.path}: no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const readStatus = (headers: http2.IncomingHttpHeaders): void => {
        const code = headers['grpc-status'];
        if (code === undefined) return;
        status = Number(code);
        details = decodeDetails(headers['grpc-message']);
      };
      stream.on('response', readStatus);
      stream.on('trailers', readStatus);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (error) =>
        finish(new CoreUnavailable(`${method.path}: ${error.message}`)),
      );
      stream.on('close', () => {
        if (status === null) {
          finish(new CoreUnavailable(`${method.path}: closed without a gRPC status`));
        } else if (status === GRPC_UNKNOWN) {
          finish(new CoreRefused(details));
        } else if (status !== 0) {
          finish(new CoreUnavailable(`${method.path}: gRPC status ${status} ${details}`, status));
        } else {
          try {
            finish(null, decodeAnswer(method, Buffer.concat(chunks)));
          } catch (error) {
            finish(new CoreUnavailable(`${method.path}: ${(error as Error).message}`));
          }
        }
      });
      stream.end(frame);
    });
  }
}

/** The one message of a unary answer: 1 byte (not compressed), its length in 4, the message. */
function decodeAnswer(method: CoreMethod, body: Buffer): Record<string, unknown> {
  if (body.length < 5 || body[0] !== 0) throw new Error('an answer that is not one gRPC message');
  const length = body.readUInt32BE(1);
  if (body.length < 5 + length) throw new Error('a gRPC message cut short');
  return method.response.toObject(method.response.decode(body.subarray(5, 5 + length)), {
    longs: String,
    defaults: true,
  }) as Record<string, unknown>;
}

/** `grpc-message` is percent-encoded. */
function decodeDetails(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
