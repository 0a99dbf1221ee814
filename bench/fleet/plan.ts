/**
 * The shape of a `bench:fleet` run, shared by the harness and its node workers: who is online on
 * which node, the ids and secrets every side derives from a number (the database is bulk-loaded
 * with the same formulas in SQL, so no list of a million ids is ever passed around), the rates,
 * and the messages between the harness and its workers.
 */
import { createHash } from 'node:crypto';

/**
 * md5 of `text` as a version-4 UUID (the version and variant digits set, as the service's
 * validation requires), the same as `md5UuidSql` makes in PostgreSQL.
 */
export function md5Uuid(text: string): string {
  const h = createHash('md5').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20)}`;
}
const md5UuidSql = (text: string): string =>
  `(SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-8' ||
           substr(h, 18, 3) || '-' || substr(h, 21, 12))::uuid FROM md5(${text}) AS h)`;

/** Account `g` (1-based); `fleetUserSql` is the same in SQL. */
export const fleetUserId = (g: number): string => md5Uuid(`fleet-user-${g}`);
export const fleetUserSql = (g: string): string => md5UuidSql(`'fleet-user-' || ${g}`);
/** The device of online account `g` (its app, known by its HWID). */
export const fleetDeviceId = (g: number): string => md5Uuid(`fleet-device-${g}`);
export const fleetDeviceSql = (g: string): string => md5UuidSql(`'fleet-device-' || ${g}`);
/** The HWID header the app of online account `g` sends; its device is bulk-loaded under it. */
export const fleetHwid = (g: number): string => `fleet-hwid-${g}`;
export const fleetHwidSql = (g: string): string => `('fleet-hwid-' || ${g})`;
/** The signed-in session (a refresh session row) of online account `g`. */
export const fleetSessionId = (g: number): string => md5Uuid(`fleet-session-${g}`);
export const fleetSessionSql = (g: string): string => md5UuidSql(`'fleet-session-' || ${g}`);
/** Node `n` (1-based). */
export const fleetNodeId = (n: number): string => md5Uuid(`fleet-node-${n}`);
export const fleetNodeSql = (n: string): string => md5UuidSql(`'fleet-node-' || ${n}`);
/** The agent secret of node `n`, as its agent sends it in `X-Internal-Secret`. */
export const fleetNodeSecret = (n: number): string =>
  createHash('sha256').update(`fleet-node-secret-${n}`).digest('base64url');

/**
 * Node `n`'s own loopback address, 127.1.0.1 onwards (the whole 127.0.0.0/8 is the loopback on
 * Linux), so that every node has its own tunnel host and admission server as in a real fleet.
 */
export function fleetNodeHost(n: number): string {
  return `127.${1 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
}
/** The same in SQL, for an integer expression `n`. */
export const fleetNodeHostSql = (n: string): string =>
  `'127.' || (1 + (${n} >> 16)) || '.' || ((${n} >> 8) & 255) || '.' || (${n} & 255)`;

export interface FleetScale {
  users: number;
  nodes: number;
}

/** 20% of the accounts are online at once. */
export const ONLINE_SHARE = 0.2;
/** Every node reports once a period. */
export const REPORT_PERIOD_MS = 60_000;
/** Share of the online users that reconnect each minute. */
export const RECONNECT_SHARE_PER_MINUTE = 0.1;
/** Each online user's app asks for its account once this often. */
export const ME_PERIOD_MS = 5 * 60_000;

/** Each online user's app fetches its subscription link once this often (the service's SUB_UPDATE_INTERVAL_H, 12). */
export const SUB_PERIOD_MS = 12 * 3600_000;
/** Each node asks for its credentials once this often (the agent's CREDENTIALS_POLL_S, 60). */
export const CREDENTIALS_PERIOD_MS = 60_000;

export const onlineUsers = (scale: FleetScale): number => Math.floor(scale.users * ONLINE_SHARE);
/** The online users on node `n`: n, n + nodes, n + 2 × nodes, … */
export function usersOfNode(n: number, scale: FleetScale): number[] {
  const users: number[] = [];
  for (let g = n; g <= onlineUsers(scale); g += scale.nodes) users.push(g);
  return users;
}
/** `count` nodes spread over the fleet, which run as real agents among the generated ones. */
export function realAgentNodes(scale: FleetScale, count: number): number[] {
  const picked = new Set<number>();
  for (let i = 0; i < Math.min(count, scale.nodes); i += 1) {
    picked.add(1 + Math.floor((i * scale.nodes) / Math.min(count, scale.nodes)));
  }
  return [...picked];
}
/** The node online user `g` is on. Online users are accounts 1..online. */
export const nodeOfUser = (g: number, scale: FleetScale): number => ((g - 1) % scale.nodes) + 1;

/** What a node worker is given (argv[2], JSON). */
export interface WorkerPlan {
  worker: number;
  workers: number;
  scale: FleetScale;
  serviceUrl: string;
  jwtAccessSecret: string;
  accessTokenTtlS: number;
  admissionPort: number;
  tls: { cert: string; key: string; certPem: string; sha256: string };
  /** Where this worker's nodes keep their journals. */
  journalDir: string;
  /** The nodes this worker runs; absent: every `workers`-th node from `worker + 1`. */
  nodes?: number[];
  /** Whether this worker's users reconnect and ask for their account (else the nodes only report). */
  userTraffic: boolean;
}

/** What the lean fleet generator is given (argv[2], JSON). */
export interface GeneratorPlan {
  scale: FleetScale;
  serviceUrl: string;
  jwtAccessSecret: string;
  accessTokenTtlS: number;
  /** SEED_PEPPER of the service, from which the link tokens derive. */
  seedPepper: string;
  /** Nodes run by real agents, which report themselves (the generator syncs their credentials). */
  realNodes: number[];
  /** The generator's `GET /internal/credentials` starts from this version, as nodes already in sync. */
  credentialsVersion: number;
}

/** Latencies in ms by route, and error answers by `route status`. */
export interface Samples {
  latencies: Record<string, number[]>;
  errors: Record<string, number>;
  /** Report cycles that ended; late: took longer than a period, or not delivered. */
  cycles: number;
  lateCycles: number;
  slowestCycleMs: number;
  /** The largest GET /nodes/routing answer, in bytes (it lists every online node). */
  routingBytes: number;
  /** Bytes carried by the cores of this worker so far (the generator: bytes of acknowledged reports). */
  carried: number;
  /** The generator: how late its latest-sent request was against its schedule, in ms (0 for a worker). */
  maxLagMs: number;
  /** Requests not sent because too many were in flight: the sender fell behind. */
  behind: number;
  /**
   * Answers slower than SLOW_ANSWER_MS, by the clock's second they were asked in (seconds since the
   * epoch): slow answers that bunch in some seconds, or at the same second of every minute, point
   * at something done then.
   */
  slowBySecond: Record<number, number>;
}

/** An answer slower than this counts in `slowBySecond`: the p99 bar of every route. */
export const SLOW_ANSWER_MS = 100;

/** Records an answer of `route` that took `ms`, asked at `askedAt` (`performance.now()`). */
export function recordAnswer(samples: Samples, route: string, ms: number, askedAt: number): void {
  (samples.latencies[route] ??= []).push(ms);
  if (ms > SLOW_ANSWER_MS) {
    const second = Math.floor((performance.timeOrigin + askedAt) / 1000);
    samples.slowBySecond[second] = (samples.slowBySecond[second] ?? 0) + 1;
  }
}

export const emptySamples = (): Samples => ({
  latencies: {},
  errors: {},
  cycles: 0,
  lateCycles: 0,
  slowestCycleMs: 0,
  routingBytes: 0,
  carried: 0,
  maxLagMs: 0,
  behind: 0,
  slowBySecond: {},
});

/**
 * start: the warm-up period begins now; the measured minutes begin at `measureAt` (ms since the
 * epoch), and each node's reports are phased from there.
 */
export type ToWorker =
  { type: 'start'; measureAt: number } | { type: 'flush' } | { type: 'finish' };
export type FromWorker =
  | { type: 'ready'; nodes: number; sessions: number }
  | { type: 'samples'; samples: Samples }
  | { type: 'finished'; samples: Samples }
  | { type: 'failed'; error: string };

export const ROUTES = {
  traffic: 'POST /internal/traffic',
  validate: 'POST /internal/validate',
  routing: 'GET /nodes/routing',
  me: 'GET /users/me',
  sub: 'GET /sub/<token>',
  credentials: 'GET /internal/credentials',
  admission: 'node: POST /v1/sessions',
} as const;
