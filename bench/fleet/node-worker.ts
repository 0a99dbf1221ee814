/**
 * A worker process of `npm run bench:fleet`: a share of the simulated nodes and the users online
 * on them. Each node is the agent's own modules (journal, sessions, admission over TLS on the
 * node's loopback address, reporter, the service client with the node's secret) around an
 * in-memory core; only the core and the closing of connections are stand-ins. Its users reconnect
 * (GET /nodes/routing, then POST /v1/sessions to their node, whose agent calls
 * POST /internal/validate) and ask for GET /users/me at the plan's rates. Every latency is measured
 * here, as the node or the app sees it, and sent to the harness once a minute.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import { Admission } from '../../agent/src/admission';
import type { ConnectionCloser } from '../../agent/src/connections';
import type { CoreClient } from '../../agent/src/core-client';
import { emptyJournal, Journal, type JournalState, type Report } from '../../agent/src/journal';
import type { Log } from '../../agent/src/log';
import { Reporter } from '../../agent/src/reporter';
import {
  ServiceClient,
  ServiceUnavailable,
  type TrafficAnswer,
  type Validation,
} from '../../agent/src/service-client';
import { Sessions, sessionEmail } from '../../agent/src/sessions';
import { MemoryCore } from './memory-core';
import {
  emptySamples,
  recordAnswer,
  type FromWorker,
  fleetNodeHost,
  fleetNodeId,
  fleetNodeSecret,
  fleetSessionId,
  fleetUserId,
  ME_PERIOD_MS,
  RECONNECT_SHARE_PER_MINUTE,
  REPORT_PERIOD_MS,
  ROUTES,
  type ToWorker,
  usersOfNode,
  type WorkerPlan,
} from './plan';

const plan = JSON.parse(process.argv[2]) as WorkerPlan;
const FLOW = 'xtls-rprx-vision';
/** The agent's default; no session goes idle within a run. */
const SESSION_IDLE_MS = 1_800_000;
/** Requests of this worker's users in flight at most; more are counted as the harness falling behind. */
const MAX_IN_FLIGHT = 256;

let samples = emptySamples();
function record(route: string, started: number): void {
  recordAnswer(samples, route, now() - started, started);
}
function failed(route: string, status: number | string): void {
  const key = `${route} ${status}`;
  samples.errors[key] = (samples.errors[key] ?? 0) + 1;
}
const now = (): number => performance.now();

/** The agent's service client, timing each call as the node sees it. */
class TimedServiceClient extends ServiceClient {
  override async validate(token: string): Promise<Validation> {
    return this.timed(ROUTES.validate, () => super.validate(token));
  }

  override async traffic(report: Report): Promise<TrafficAnswer> {
    return this.timed(ROUTES.traffic, () => super.traffic(report));
  }

  private async timed<T>(route: string, call: () => Promise<T>): Promise<T> {
    const started = now();
    try {
      const answer = await call();
      record(route, started);
      return answer;
    } catch (error) {
      failed(route, error instanceof ServiceUnavailable ? (error.status ?? 'network') : 'error');
      throw error;
    }
  }
}

interface SimulatedNode {
  n: number;
  id: string;
  host: string;
  core: MemoryCore;
  state: JournalState;
  sessions: Sessions;
  reporter: Reporter;
  server: https.Server;
  service: ServiceClient;
  /** The online users (account numbers) on this node. */
  users: Set<number>;
  /** The running report cycle, so that cycles of one node never overlap. */
  cycle: Promise<void>;
}

/** Events of the agent's modules that mean something went wrong, counted. */
const shown = new Set<string>();
const log: Log = (event, fields) => {
  if (!event.endsWith('_failed')) return;
  failed(`agent ${event}`, 'logged');
  // The first of each kind in full, so that a failing run says why.
  if (!shown.has(event)) {
    shown.add(event);
    process.stderr.write(`node worker ${plan.worker}: ${event} ${JSON.stringify(fields)}\n`);
  }
};

const nodes: SimulatedNode[] = [];
const tlsKey = readFileSync(plan.tls.key);
/** The core email each online user's app is connected through now. */
const currentEmail = new Map<number, string>();
const tokens = new Map<number, string>();
const userNode = new Map<number, SimulatedNode>();
const nodeById = new Map<string, SimulatedNode>();
const timers: NodeJS.Timeout[] = [];
let inFlight = 0;
let stopping = false;
const running = new Set<Promise<unknown>>();

const serviceAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const admissionAgent = new https.Agent({
  keepAlive: true,
  maxSockets: 64,
  // Below the admission server's 5 s keep-alive: a socket it is closing is never reused.
  timeout: 4_000,
  ca: plan.tls.certPem,
  // The certificate is pinned by the routing entry's SHA-256, not by a host name.
  checkServerIdentity: () => undefined,
  // One TLS session kept per node, so that a user's reconnection resumes it as a client would
  // instead of a full handshake: both ends of it run here, on the service's machine.
  maxCachedSessions: plan.scale.nodes,
});

function accessToken(g: number): string {
  let token = tokens.get(g);
  if (token === undefined) {
    token = jwt.sign(
      { sub: fleetUserId(g), sid: fleetSessionId(g), role: null },
      plan.jwtAccessSecret,
      { algorithm: 'HS256', expiresIn: plan.accessTokenTtlS },
    );
    tokens.set(g, token);
  }
  return token;
}

function request(
  send: typeof http.request | typeof https.request,
  url: string,
  options: http.RequestOptions,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = send(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
      );
    });
    sent.setTimeout(30_000, () => sent.destroy(new Error('timed out after 30 s')));
    sent.on('error', reject);
    sent.end(body);
  });
}

async function startNode(n: number, users: number[]): Promise<SimulatedNode> {
  const id = fleetNodeId(n);
  const host = fleetNodeHost(n);
  const dir = join(plan.journalDir, `node-${n}`);
  mkdirSync(dir, { recursive: true });
  const core = new MemoryCore();
  // The users were online before the run: their sessions are in the node's journal, and the
  // agent's restore puts them into the core, as after an agent restart.
  const state: JournalState = emptyJournal();
  const started = Date.now();
  state.sessions = users.map((g) => ({
    email: sessionEmail(fleetUserId(g), 0),
    userId: fleetUserId(g),
    slot: 0,
    vlessId: fleetSessionId(g),
    createdAt: started,
    lastActiveAt: started,
  }));
  const journal = new Journal(dir, () => state);
  await journal.commit();
  const coreClient = core as unknown as CoreClient;
  const connections = { close: () => Promise.resolve(0) } as unknown as ConnectionCloser;
  const sessions = new Sessions(
    state,
    journal,
    coreClient,
    connections,
    { maxSessionsPerUser: 5, flow: FLOW },
    log,
  );
  await sessions.restore();
  const service = new TimedServiceClient(plan.serviceUrl, id, fleetNodeSecret(n));
  const reporter = new Reporter(state, journal, coreClient, service, sessions, log);
  const server = await new Admission(sessions, service, FLOW, log).listen({
    host,
    port: plan.admissionPort,
    cert: Buffer.from(plan.tls.certPem),
    key: tlsKey,
  });
  for (const g of users) currentEmail.set(g, sessionEmail(fleetUserId(g), 0));
  const node: SimulatedNode = {
    ...{ n, id, host, core, state, sessions, reporter, server, service },
    users: new Set(users),
    cycle: Promise.resolve(),
  };
  for (const g of users) userNode.set(g, node);
  nodeById.set(id, node);
  return node;
}

/** The traffic of a minute on every user of the node, then one report cycle of the agent. */
function reportCycle(node: SimulatedNode, carry: boolean): Promise<void> {
  node.cycle = node.cycle.then(async () => {
    if (carry) {
      for (const g of node.users) {
        const email = currentEmail.get(g)!;
        node.core.carry(
          email,
          1_000 + Math.floor(Math.random() * 100_000),
          10_000 + Math.floor(Math.random() * 1_000_000),
        );
      }
    }
    const started = now();
    const delivered = await node.reporter.cycle().catch(() => false);
    const ms = now() - started;
    samples.cycles += 1;
    samples.slowestCycleMs = Math.max(samples.slowestCycleMs, ms);
    if (!delivered || ms > REPORT_PERIOD_MS) samples.lateCycles += 1;
    await node.sessions.endIdle(SESSION_IDLE_MS);
  });
  return node.cycle;
}

/** Reports of each node once a period, the nodes' phases spread evenly over the period. */
function scheduleReports(measureAt: number): void {
  const total = plan.scale.nodes;
  for (const node of nodes) {
    const offset = ((node.n - 1) / total) * REPORT_PERIOD_MS;
    let next = measureAt + offset;
    while (next - REPORT_PERIOD_MS > Date.now()) next -= REPORT_PERIOD_MS;
    if (next < Date.now()) next += REPORT_PERIOD_MS;
    const tick = (): void => {
      if (stopping) return;
      track(reportCycle(node, true));
      next += REPORT_PERIOD_MS;
      timers.push(setTimeout(tick, next - Date.now()));
    };
    timers.push(setTimeout(tick, next - Date.now()));
  }
}

function track(work: Promise<unknown>): void {
  running.add(work);
  void work.finally(() => running.delete(work));
}

/**
 * A user's app reconnects: the routing list, then an admission at a node of it: the node it was
 * on when the list still has it, else one of the list's nodes that this worker runs.
 */
async function reconnect(g: number): Promise<void> {
  const was = userNode.get(g)!;
  const headers = { authorization: `Bearer ${accessToken(g)}` };
  let started = now();
  const routing = await request(http.request, `${plan.serviceUrl}/nodes/routing`, {
    agent: serviceAgent,
    headers,
  });
  if (routing.status !== 200) return failed(ROUTES.routing, routing.status);
  record(ROUTES.routing, started);
  samples.routingBytes = Math.max(samples.routingBytes, Buffer.byteLength(routing.text));
  const entries = JSON.parse(routing.text) as { node_id: string; session_token: string }[];
  const ours = entries.filter((each) => nodeById.has(each.node_id));
  const entry =
    ours.find((each) => each.node_id === was.id) ?? ours[Math.floor(Math.random() * ours.length)];
  if (!entry) return failed(ROUTES.routing, 'no node of this worker listed');
  const node = nodeById.get(entry.node_id)!;
  started = now();
  const body = JSON.stringify({ session_token: entry.session_token });
  const admitted = await request(
    https.request,
    `https://${node.host}:${plan.admissionPort}/v1/sessions`,
    {
      method: 'POST',
      agent: admissionAgent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    },
    body,
  );
  if (admitted.status !== 201) return failed(ROUTES.admission, admitted.status);
  record(ROUTES.admission, started);
  const userId = fleetUserId(g);
  const session = node.state.sessions.findLast((each) => each.userId === userId);
  if (session) currentEmail.set(g, session.email);
  if (node !== was) {
    // Its session on the old node carries nothing more and ends when idle, as on a real node.
    was.users.delete(g);
    node.users.add(g);
    userNode.set(g, node);
  }
}

async function me(g: number): Promise<void> {
  const started = now();
  const answer = await request(http.request, `${plan.serviceUrl}/users/me`, {
    agent: serviceAgent,
    headers: { authorization: `Bearer ${accessToken(g)}` },
  });
  if (answer.status !== 200) return failed(ROUTES.me, answer.status);
  record(ROUTES.me, started);
}

/** Starts `perSecond` calls of `call` a second, spread over 100 ms ticks. */
function atRate(perSecond: number, pick: () => number, call: (g: number) => Promise<void>): void {
  let due = 0;
  const timer = setInterval(() => {
    due += perSecond / 10;
    for (; due >= 1; due -= 1) {
      if (inFlight >= MAX_IN_FLIGHT) {
        failed('harness', 'behind');
        continue;
      }
      inFlight += 1;
      const g = pick();
      track(
        call(g)
          .catch((error: Error) => failed(call === me ? ROUTES.me : 'reconnect', error.message))
          .finally(() => {
            inFlight -= 1;
          }),
      );
    }
  }, 100);
  timers.push(timer);
}

async function main(): Promise<void> {
  const ours =
    plan.nodes ??
    Array.from(
      { length: Math.ceil((plan.scale.nodes - plan.worker) / plan.workers) },
      (_, i) => plan.worker + 1 + i * plan.workers,
    );
  for (const n of ours) nodes.push(await startNode(n, usersOfNode(n, plan.scale)));
  send({ type: 'ready', nodes: nodes.length, sessions: userNode.size });
}

/** The users start reconnecting and asking, the nodes reporting. */
function start(measureAt: number): void {
  scheduleReports(measureAt);
  if (!plan.userTraffic) return;
  const users = [...userNode.keys()];
  if (users.length === 0) return;
  const random = (): number => users[Math.floor(Math.random() * users.length)];
  let nextMe = 0;
  const rotating = (): number => users[nextMe++ % users.length];
  atRate((users.length * RECONNECT_SHARE_PER_MINUTE) / 60, random, reconnect);
  atRate(users.length / (ME_PERIOD_MS / 1000), rotating, me);
}

function carried(): number {
  return nodes.reduce((sum, node) => sum + node.core.carried, 0);
}

function send(message: FromWorker): void {
  process.send!(message);
}

/** Stops the users, lets every node report what its core carried until acknowledged. */
async function finish(): Promise<void> {
  stopping = true;
  for (const timer of timers) clearTimeout(timer); // clears intervals too
  await Promise.allSettled([...running]);
  const final = emptySamples();
  let undelivered = 0;
  for (let i = 0; i < nodes.length; i += 20) {
    await Promise.all(
      nodes.slice(i, i + 20).map(async (node) => {
        for (let attempt = 0; attempt < 5; attempt += 1) {
          await reportCycle(node, false);
          if (node.state.pending === null) break;
        }
        if (node.state.pending !== null) undelivered += 1;
        // Done: its connection closes now, not 5 s later. Thousands of nodes flushing at once
        // would otherwise hold more idle connections than the service's HTTP_MAX_CONNECTIONS.
        node.service.close();
      }),
    );
  }
  final.latencies = samples.latencies;
  final.errors = samples.errors;
  if (undelivered > 0) final.errors['final report undelivered'] = undelivered;
  final.cycles = samples.cycles;
  final.lateCycles = samples.lateCycles;
  final.slowestCycleMs = samples.slowestCycleMs;
  final.routingBytes = samples.routingBytes;
  final.carried = carried();
  send({ type: 'finished', samples: final });
  await Promise.all(
    nodes.map(
      (node) =>
        new Promise<void>((done) => {
          node.server.close(() => done());
          node.server.closeAllConnections();
        }),
    ),
  );
  serviceAgent.destroy();
  admissionAgent.destroy();
  process.disconnect?.();
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'start') {
    start(message.measureAt);
  } else if (message.type === 'flush') {
    const out = samples;
    samples = emptySamples();
    out.carried = carried();
    send({ type: 'samples', samples: out });
  } else if (message.type === 'finish') {
    finish().catch((error: Error) => send({ type: 'failed', error: error.stack ?? error.message }));
  }
});

main().catch((error: Error) => send({ type: 'failed', error: error.stack ?? error.message }));
