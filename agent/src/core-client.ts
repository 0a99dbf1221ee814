import * as grpc from '@grpc/grpc-js';
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

const STAT = /^user>>>(.+)>>>traffic>>>(uplink|downlink)$/;

/**
 * The tunnel core's gRPC API (Xray, or V2Ray 4.x by its package prefix): add and remove VLESS users
 * on one inbound, read the per-user counters without resetting them, and the core's uptime (which
 * goes down when the core restarted and lost its API-added users and counters).
 */
export class CoreClient {
  private readonly client: grpc.Client;
  private readonly schema: CoreSchema;

  constructor(
    address: string,
    prefix: CorePrefix,
    private readonly inboundTag: string,
    private readonly timeoutMs = 5_000,
  ) {
    this.schema = coreSchema(prefix);
    const target = address.startsWith('/') ? `unix:${address}` : address;
    this.client = new grpc.Client(target, grpc.credentials.createInsecure());
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
    this.client.close();
  }

  private call(method: CoreMethod, request: object): Promise<Record<string, unknown>> {
    const serialize = (value: object): Buffer =>
      Buffer.from(method.request.encode(method.request.fromObject(value)).finish());
    const deserialize = (bytes: Buffer): Record<string, unknown> =>
      method.response.toObject(method.response.decode(bytes), {
        longs: String,
        defaults: true,
      }) as Record<string, unknown>;
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        method.path,
        serialize,
        deserialize,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + this.timeoutMs },
        (error, answer) => {
          if (error) {
            reject(error.code === grpc.status.UNKNOWN ? new CoreRefused(error.details) : error);
          } else resolve(answer ?? {});
        },
      );
    });
  }
}
