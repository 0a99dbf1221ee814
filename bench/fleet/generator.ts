/**
 * The lean fleet generator of `npm run bench:fleet`: what the service sees of the whole fleet,
 * its HTTP requests, sent from one process at the rates of plan.ts, without running the agent's
 * modules for each node (what a node costs on its own machine is `bench:agent`'s question).
 *
 * Each node not run by a real agent sends once a period a traffic report as the agent sends it
 * (`X-Internal-Secret` of the node; an entry per online user with that user's device share, and
 * the devices online now); every node asks `GET /internal/credentials` from the version it has,
 * as the agent's credential sync does every CREDENTIALS_POLL_S. Each online user's app reconnects
 * (`GET /nodes/routing`, then the node of the first entry validates the one-time token with
 * `POST /internal/validate`), asks `GET /users/me`, and fetches its subscription link with its
 * HWID. Every request has its time on a schedule spread evenly over its period; a 20 ms tick
 * sends what is due. Bodies and headers are made before the run; requests share SOCKETS kept-alive
 * connections, spoken to by a minimal HTTP/1.1 client. It measures each latency, how late it sent against the schedule, and
 * the bytes of the reports the service acknowledged, and sends them to the harness once a minute.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { LinkTokens } from '../../src/devices/link-tokens';
import {
  CREDENTIALS_PERIOD_MS,
  emptySamples,
  recordAnswer,
  type FromWorker,
  fleetDeviceId,
  fleetHwid,
  fleetNodeId,
  fleetNodeSecret,
  fleetSessionId,
  fleetUserId,
  type GeneratorPlan,
  ME_PERIOD_MS,
  onlineUsers,
  RECONNECT_SHARE_PER_MINUTE,
  REPORT_PERIOD_MS,
  ROUTES,
  SUB_PERIOD_MS,
  type ToWorker,
  usersOfNode,
} from './plan';

const plan = JSON.parse(process.argv[2]) as GeneratorPlan;
const TICK_MS = 20;
/** Connections to the service at most; requests past them wait in the pool's queue. */
const SOCKETS = 64;
/** Requests in flight at most; one due past this is not sent and counted as falling behind. */
const MAX_IN_FLIGHT = 1_024;
const TIMEOUT_MS = 30_000;
/** What the apps say of themselves when they fetch the link. */
const APP = 'v2rayNG/1.8.5';

const base = new URL(plan.serviceUrl);
const apiPath = base.pathname.replace(/\/$/, '');
const linkTokens = new LinkTokens(plan.seedPepper);

let samples = emptySamples();
let inFlight = 0;
let stopping = false;
/** Bytes of the reports the service answered 2xx to, since the start. */
let acknowledged = 0;
const idle: (() => void)[] = [];

function failed(route: string, status: number | string): void {
  const key = `${route} ${status}`;
  samples.errors[key] = (samples.errors[key] ?? 0) + 1;
}

/** What a request's sender is told: the status, the answer's first bytes (latin1) and its length. */
type Answered = (status: number, text: string, length: number) => void;

interface Pending {
  route: string;
  bytes: Buffer;
  done: Answered;
  /** When it was asked for, for its latency (its wait for a connection included). */
  at: number;
}

/** What is read of an answer's body here: routing's first entry, credentials' version. */
const HEAD_BYTES = 4_096;
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * One kept-alive HTTP/1.1 connection to the service, one request at a time, with the least the
 * generator needs of HTTP: the status, Content-Length or chunked bodies, the first bytes of the
 * body. Node's own client costs several times more CPU a request, which at the fleet's rate
 * would be more than the generator's budget.
 */
class Connection {
  private socket: Socket | null = null;
  current: Pending | null = null;
  private buffer: Buffer = Buffer.alloc(0);
  private status = 0;
  /** Body bytes still to come (Content-Length), or -1 for a chunked body, or null before headers. */
  private remaining: number | null = null;
  private head = '';
  private length = 0;

  constructor(private readonly next: () => Pending | undefined) {}

  send(pending: Pending): void {
    this.current = pending;
    if (!this.socket) this.open();
    this.socket!.write(pending.bytes);
  }

  /** Ends a request that waited longer than `ms` for its answer. */
  expire(now: number, ms: number): void {
    if (this.current && now - this.current.at > ms) this.socket?.destroy();
  }

  close(): void {
    this.socket?.destroy();
  }

  private open(): void {
    const socket = connect(Number(base.port), base.hostname);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.buffer = Buffer.alloc(0);
      this.remaining = null;
      if (this.current) {
        failed(this.current.route, 'connection closed');
        answered(this.current, 0, '', 0);
      }
      this.current = null;
      this.take();
    });
    this.socket = socket;
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.remaining === null) {
        const end = this.buffer.indexOf(HEADER_END);
        if (end < 0) return;
        const headers = this.buffer.toString('latin1', 0, end);
        this.status = Number(headers.slice(9, 12));
        const length = /\r\ncontent-length: *(\d+)/i.exec(headers);
        this.remaining = length
          ? Number(length[1])
          : /\r\ntransfer-encoding: *chunked/i.test(headers)
            ? -1
            : 0;
        this.head = '';
        this.length = 0;
        this.buffer = this.buffer.subarray(end + 4);
      }
      if (this.remaining >= 0) {
        const take = Math.min(this.remaining, this.buffer.length);
        this.body(this.buffer.subarray(0, take));
        this.buffer = this.buffer.subarray(take);
        this.remaining -= take;
        if (this.remaining > 0) return;
      } else {
        // Chunked: a hex size line, the chunk and CRLF; the size 0 and an empty line end it.
        const line = this.buffer.indexOf('\r\n');
        if (line < 0) return;
        const size = parseInt(this.buffer.toString('latin1', 0, line), 16);
        const trailer = size === 0 ? this.buffer.indexOf(HEADER_END, line) : -1;
        if (size === 0 && trailer < 0) return;
        if (size > 0 && this.buffer.length < line + 2 + size + 2) return;
        if (size > 0) {
          this.body(this.buffer.subarray(line + 2, line + 2 + size));
          this.buffer = this.buffer.subarray(line + 2 + size + 2);
          continue;
        }
        this.buffer = this.buffer.subarray(trailer + 4);
      }
      this.remaining = null;
      // Still busy while its sender runs: a request the sender makes goes to another connection.
      answered(this.current!, this.status, this.head, this.length);
      this.current = null;
      this.take();
      if (this.buffer.length === 0) return;
    }
  }

  private body(part: Buffer): void {
    if (this.head.length < HEAD_BYTES && part.length > 0) {
      this.head += part.toString('latin1', 0, Math.min(part.length, HEAD_BYTES - this.head.length));
    }
    this.length += part.length;
  }

  private take(): void {
    const pending = this.next();
    if (pending) this.send(pending);
  }
}

const waiting: Pending[] = [];
let waitingFrom = 0;
const connections = Array.from(
  { length: SOCKETS },
  () =>
    new Connection(() => {
      if (waitingFrom >= waiting.length) return undefined;
      const pending = waiting[waitingFrom++];
      if (waitingFrom > 1_024) {
        waiting.splice(0, waitingFrom);
        waitingFrom = 0;
      }
      return pending;
    }),
);

function answered(pending: Pending, status: number, text: string, length: number): void {
  inFlight -= 1;
  if (status >= 200 && status < 300) {
    recordAnswer(samples, pending.route, performance.now() - pending.at, pending.at);
  } else if (status !== 0) failed(pending.route, status);
  pending.done(status, text, length);
  if (inFlight === 0) for (const wake of idle.splice(0)) wake();
}

/**
 * One request: to an idle connection, else in the queue for the next that is free. Past
 * MAX_IN_FLIGHT it is not sent and counted as falling behind.
 */
function send(
  route: string,
  options: { method: 'GET' | 'POST'; path: string; headers: Record<string, string> },
  body: string | null,
  done: Answered,
): void {
  if (inFlight >= MAX_IN_FLIGHT) {
    samples.behind += 1;
    return;
  }
  inFlight += 1;
  let head = `${options.method} ${options.path} HTTP/1.1\r\nhost: ${base.host}\r\n`;
  for (const [name, value] of Object.entries(options.headers)) head += `${name}: ${value}\r\n`;
  if (body !== null)
    head += `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  const pending: Pending = {
    route,
    bytes: Buffer.from(`${head}\r\n${body ?? ''}`),
    done,
    at: performance.now(),
  };
  const free = connections.find((connection) => connection.current === null);
  if (free) free.send(pending);
  else waiting.push(pending);
}

/** An access token of online account `g`, as the service signs it (HS256). */
function accessToken(g: number, issuedAt: number): string {
  const encode = (value: object): string =>
    Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = encode({ alg: 'HS256', typ: 'JWT' });
  const claims = encode({
    sub: fleetUserId(g),
    sid: fleetSessionId(g),
    role: null,
    iat: issuedAt,
    exp: issuedAt + plan.accessTokenTtlS,
  });
  const signature = createHmac('sha256', plan.jwtAccessSecret)
    .update(`${head}.${claims}`)
    .digest('base64url');
  return `Bearer ${head}.${claims}.${signature}`;
}

interface LeanNode {
  id: string;
  secret: string;
  /** The report's body around its report id. */
  head: string;
  tail: string;
  /** The bytes each report carries. */
  bytes: number;
  /** The credentials version this node has applied. */
  version: number;
}

/** Node `n` as its agent reports it: each user's bytes of the minute, on the user's one device. */
function leanNode(n: number, since: string): LeanNode {
  const id = fleetNodeId(n);
  const entries: string[] = [];
  const online: string[] = [];
  let bytes = 0;
  for (const g of usersOfNode(n, plan.scale)) {
    const up = 1_000 + ((g * 7_919) % 100_000);
    const down = 10_000 + ((g * 104_729) % 1_000_000);
    bytes += up + down;
    const device = fleetDeviceId(g);
    entries.push(
      JSON.stringify({
        user_id: fleetUserId(g),
        bytes_up: up,
        bytes_down: down,
        devices: [{ device_id: device, bytes_up: up, bytes_down: down }],
      }),
    );
    const address = `10.${(g >> 16) & 255}.${(g >> 8) & 255}.${g & 255}`;
    online.push(JSON.stringify({ device_id: device, address, since }));
  }
  return {
    id,
    secret: fleetNodeSecret(n),
    head: `{"node_id":"${id}","report_id":"`,
    tail: `","entries":[${entries.join(',')}],"online":[${online.join(',')}]}`,
    bytes: entries.length === 0 ? 0 : bytes,
    version: plan.credentialsVersion,
  };
}

const realNodes = new Set(plan.realNodes);
const online = onlineUsers(plan.scale);
const started = new Date().toISOString();
/** Every node asks for its credentials; the real agents' nodes report themselves. */
const fleetNodes = Array.from({ length: plan.scale.nodes }, (_, i) => leanNode(i + 1, started));
const leanNodes = fleetNodes.filter((_, i) => !realNodes.has(i + 1));
const secretOf = new Map(
  Array.from({ length: plan.scale.nodes }, (_, i) => [fleetNodeId(i + 1), fleetNodeSecret(i + 1)]),
);
const issuedAt = Math.floor(Date.now() / 1000);
const authorization = Array.from({ length: online }, (_, i) => accessToken(i + 1, issuedAt));

function report(node: LeanNode): void {
  if (node.bytes === 0) return;
  const body = node.head + randomUUID() + node.tail;
  const headers = { 'x-internal-secret': node.secret };
  send(
    ROUTES.traffic,
    { method: 'POST', path: `${apiPath}/internal/traffic`, headers },
    body,
    (status) => {
      if (status >= 200 && status < 300) acknowledged += node.bytes;
      samples.cycles += 1;
      if (status < 200 || status >= 300) samples.lateCycles += 1;
    },
  );
}

function credentials(node: LeanNode): void {
  const path = `${apiPath}/internal/credentials?node_id=${node.id}&since=${node.version}`;
  const headers = { 'x-internal-secret': node.secret, accept: 'application/json' };
  send(ROUTES.credentials, { method: 'GET', path, headers }, null, (status, text) => {
    // The version leads the answer; only it is read, as the agent keeps it.
    const version = /"version":(\d+)/.exec(text.slice(0, 64));
    if (status === 200 && version) node.version = Number(version[1]);
  });
}

/** The first string value named `name` in `text`; null when absent. */
function field(text: string, name: string): string | null {
  const key = `"${name}":"`;
  const at = text.indexOf(key);
  if (at < 0) return null;
  const end = text.indexOf('"', at + key.length);
  return end < 0 ? null : text.slice(at + key.length, end);
}

/** A reconnection: the routing list, then its first node validates the one-time token. */
function reconnect(g: number): void {
  const headers = { authorization: authorization[g - 1] };
  send(
    ROUTES.routing,
    { method: 'GET', path: `${apiPath}/nodes/routing`, headers },
    null,
    (status, text, length) => {
      if (status !== 200 || stopping) return;
      samples.routingBytes = Math.max(samples.routingBytes, length);
      const node = field(text, 'node_id');
      const token = field(text, 'session_token');
      const secret = node && secretOf.get(node);
      if (!node || !token || !secret) return failed(ROUTES.routing, 'no node listed');
      const body = `{"token":"${token}","node_id":"${node}"}`;
      send(
        ROUTES.validate,
        {
          method: 'POST',
          path: `${apiPath}/internal/validate`,
          headers: { 'x-internal-secret': secret },
        },
        body,
        (answered, answer) => {
          if (answered === 200 && !answer.includes('"valid":true')) {
            failed(ROUTES.validate, 'not valid');
          }
        },
      );
    },
  );
}

function me(g: number): void {
  const headers = { authorization: authorization[g - 1] };
  send(ROUTES.me, { method: 'GET', path: `${apiPath}/users/me`, headers }, null, () => undefined);
}

function subscription(g: number): void {
  const path = `/sub/${linkTokens.account(fleetUserId(g), 0)}`;
  const headers = { 'user-agent': APP, 'x-hwid': fleetHwid(g), accept: 'text/plain' };
  send(ROUTES.sub, { method: 'GET', path, headers }, null, (status, _text, length) => {
    // The link must lead somewhere: an answer that names a reason instead is a failure.
    if (status === 200 && length < 200) failed(ROUTES.sub, 'nothing to connect to');
  });
}

/**
 * `count` items, each once a `periodMs`, item i of each period at `start + i × periodMs / count`:
 * on each tick, what is due is sent, and how late the latest was is kept.
 */
class Schedule {
  private next = 0;

  constructor(
    private readonly count: number,
    private readonly periodMs: number,
    private readonly start: number,
    private readonly item: (i: number) => void,
  ) {}

  tick(now: number): void {
    if (this.count === 0) return;
    for (;;) {
      const at = this.start + (this.next * this.periodMs) / this.count;
      if (at > now) return;
      samples.maxLagMs = Math.max(samples.maxLagMs, now - at);
      this.item(this.next % this.count);
      this.next += 1;
    }
  }
}

let timer: NodeJS.Timeout | null = null;

/**
 * The requests the generator sends, by name; BENCH_FLEET_ROUTES (names apart by commas) keeps
 * only those, to tell what each costs the service. A run without every one is no full fleet.
 */
const REQUESTS = ['traffic', 'credentials', 'reconnect', 'me', 'sub'] as const;
const kept = new Set(process.env.BENCH_FLEET_ROUTES?.split(',') ?? REQUESTS);
for (const name of kept) {
  if (!(REQUESTS as readonly string[]).includes(name)) {
    throw new Error(`BENCH_FLEET_ROUTES: no request named ${name} (${REQUESTS.join(', ')})`);
  }
}

function start(): void {
  const at = Date.now();
  const all: Record<(typeof REQUESTS)[number], Schedule> = {
    traffic: new Schedule(leanNodes.length, REPORT_PERIOD_MS, at, (i) => report(leanNodes[i])),
    // Half a period from each node's report, as an agent's two loops drift apart.
    credentials: new Schedule(fleetNodes.length, CREDENTIALS_PERIOD_MS, at, (i) =>
      credentials(fleetNodes[(i + (fleetNodes.length >> 1)) % fleetNodes.length]),
    ),
    reconnect: new Schedule(online, 60_000 / RECONNECT_SHARE_PER_MINUTE, at, (i) =>
      reconnect(i + 1),
    ),
    me: new Schedule(online, ME_PERIOD_MS, at, (i) => me(i + 1)),
    sub: new Schedule(online, SUB_PERIOD_MS, at, (i) => subscription(i + 1)),
  };
  const schedules = REQUESTS.filter((name) => kept.has(name)).map((name) => all[name]);
  timer = setInterval(() => {
    const now = Date.now();
    for (const schedule of schedules) schedule.tick(now);
    const clock = performance.now();
    for (const connection of connections) connection.expire(clock, TIMEOUT_MS);
  }, TICK_MS);
}

function flush(): FromWorker {
  const out = samples;
  samples = emptySamples();
  out.carried = acknowledged;
  return { type: 'samples', samples: out };
}

async function finish(): Promise<void> {
  stopping = true;
  if (timer) clearInterval(timer);
  if (inFlight > 0) await new Promise<void>((done) => idle.push(done));
  const out = flush();
  process.send!({ ...out, type: 'finished' });
  for (const connection of connections) connection.close();
  process.disconnect?.();
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'start') start();
  else if (message.type === 'flush') process.send!(flush());
  else if (message.type === 'finish') void finish();
});
process.send!({ type: 'ready', nodes: leanNodes.length, sessions: online } satisfies FromWorker);
