import * as grpc from '@grpc/grpc-js';
import { coreSchema, type CoreMethod, type CorePrefix } from '../src/core-schema';

interface FakeUser {
  id: string;
  flow: string;
}

/**
 * A tunnel core's gRPC API as the agent sees it (V2Ray 4.x / Xray semantics): users per inbound,
 * UNKNOWN for an email added twice or removed when absent, per-user counters that survive removal
 * and are never reset by a read, and a restart that forgets users and counters.
 */
export class FakeCore {
  readonly users = new Map<string, FakeUser>();
  readonly counters = new Map<string, { up: number; down: number }>();
  /** Started an hour ago, so that a restart moves its start time by far more than a second. */
  startedAt = Date.now() - 3_600_000;
  calls = 0;
  /** When set, every call fails with UNAVAILABLE (the core is down). */
  down = false;
  private server: grpc.Server | null = null;
  port = 0;

  constructor(
    private readonly prefix: CorePrefix = 'v2ray.core',
    private readonly inboundTag = 'vless-in',
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    const schema = coreSchema(this.prefix);
    const server = new grpc.Server();
    const definition = (method: CoreMethod): grpc.MethodDefinition<object, object> => ({
      path: method.path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: object) =>
        Buffer.from(method.request.encode(method.request.fromObject(value)).finish()),
      requestDeserialize: (bytes: Buffer) => method.request.toObject(method.request.decode(bytes)),
      responseSerialize: (value: object) =>
        Buffer.from(method.response.encode(method.response.fromObject(value)).finish()),
      responseDeserialize: (bytes: Buffer) =>
        method.response.toObject(method.response.decode(bytes)),
    });
    const handle =
      (answer: (request: Record<string, unknown>) => object) =>
      (
        call: grpc.ServerUnaryCall<Record<string, unknown>, object>,
        callback: grpc.sendUnaryData<object>,
      ): void => {
        this.calls += 1;
        if (this.down) {
          callback({ code: grpc.status.UNAVAILABLE, details: 'core down' });
          return;
        }
        try {
          callback(null, answer(call.request));
        } catch (error) {
          callback({ code: grpc.status.UNKNOWN, details: (error as Error).message });
        }
      };
    server.addService(
      {
        AlterInbound: definition(schema.alterInbound),
      } as grpc.ServiceDefinition,
      {
        AlterInbound: handle((request) => {
          if (request.tag !== this.inboundTag)
            throw new Error(`handler not found: ${String(request.tag)}`);
          const operation = request.operation as { type: string; value: Uint8Array };
          if (operation.type === schema.addUser.fullName.slice(1)) {
            const { user } = schema.addUser.toObject(schema.addUser.decode(operation.value)) as {
              user: { email: string; account: { type: string; value: Uint8Array } };
            };
            if (user.account.type !== schema.vlessAccount.fullName.slice(1)) {
              throw new Error(`unknown account type ${user.account.type}`);
            }
            const account = schema.vlessAccount.toObject(
              schema.vlessAccount.decode(user.account.value),
              { defaults: true },
            ) as { id: string; flow: string };
            if (this.users.has(user.email)) throw new Error(`User ${user.email} already exists.`);
            this.users.set(user.email, { id: account.id, flow: account.flow });
          } else if (operation.type === schema.removeUser.fullName.slice(1)) {
            const { email } = schema.removeUser.toObject(
              schema.removeUser.decode(operation.value),
            ) as { email: string };
            if (!this.users.delete(email)) throw new Error(`User ${email} not found.`);
          } else {
            throw new Error(`unknown operation ${operation.type}`);
          }
          return {};
        }),
      },
    );
    server.addService(
      {
        QueryStats: definition(schema.queryStats),
        GetSysStats: definition(schema.getSysStats),
      } as grpc.ServiceDefinition,
      {
        QueryStats: handle((request) => {
          const pattern = String(request.pattern ?? '');
          const stat: { name: string; value: number }[] = [];
          for (const [email, { up, down }] of this.counters) {
            for (const [name, value] of [
              [`user>>>${email}>>>traffic>>>uplink`, up],
              [`user>>>${email}>>>traffic>>>downlink`, down],
            ] as const) {
              if (name.includes(pattern)) stat.push({ name, value });
            }
          }
          return { stat };
        }),
        GetSysStats: handle(() => ({ Uptime: Math.floor((Date.now() - this.startedAt) / 1000) })),
      },
    );
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        `127.0.0.1:${port}`,
        grpc.ServerCredentials.createInsecure(),
        (error, bound) => (error ? reject(error) : resolve(bound)),
      ),
    );
    this.server = server;
  }

  /** Bytes carried by a user the core has (as the core counts a connection's bytes). */
  carry(email: string, up: number, down: number): void {
    if (!this.users.has(email)) throw new Error(`the core has no user ${email}`);
    const counter = this.counters.get(email) ?? { up: 0, down: 0 };
    counter.up += up;
    counter.down += down;
    this.counters.set(email, counter);
  }

  /** The sum of every counter: what the core counted. */
  total(): number {
    let sum = 0;
    for (const { up, down } of this.counters.values()) sum += up + down;
    return sum;
  }

  /** A restart: users added over the API and all counters are gone, uptime starts again. */
  restart(): void {
    this.users.clear();
    this.counters.clear();
    this.startedAt = Date.now();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }
}
