import { createHash, createHmac } from 'node:crypto';
import * as https from 'node:https';
import type { TLSSocket } from 'node:tls';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SecretBox } from '../common/secret-box';
import { Limiter } from '../common/concurrency/limiter';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AdvisoryLocks } from '../database/advisory-lock';
import { Metrics } from '../metrics/metrics.service';
import { admissionUrl } from '../nodes/dto/node.response';
import { NodesRepository, type RoutingNode } from '../nodes/nodes.repository';
import { type NodeShare, RoutingService } from '../nodes/routing.service';
import { CredentialsRepository } from './credentials.repository';

/** How often the instance that holds the lock looks for changes: a fraction of the bound. */
const TICK_MS = 400;
/** One instance nudges at a time. */
export const NUDGE_LOCK_KEY = 7_000_301;
/** Nudges in flight at once, and how long one may take (the once-a-minute poll covers a miss). */
const NUDGES_AT_ONCE = 64;
const NUDGE_TIMEOUT_MS = 2_000;

/** The MAC of a nudge: the node agent's `nudgeMac` (agent/src/nudge.ts), which the agent checks. */
export function nudgeMac(secret: string, nodeId: string, version: number): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`credentials-nudge:${nodeId}:${version}`, 'utf8')
    .digest('hex');
}

/**
 * Tells nodes at once that their device set changed, so that a new device works, and a removed
 * one stops, within seconds, while a node whose set did not change costs the service one cheap
 * request a minute (its own poll). A nudge is a small HTTPS POST to the agent's admission port,
 * pinned to the agent's certificate, carrying the new version and a MAC under the node's secret;
 * the agent then asks `GET /internal/credentials` as it would on its poll.
 *
 * One instance at a time (an advisory lock per tick) watches the change counter: changed users'
 * buckets name the nodes to nudge (about 20 per user with ROUTING_NODES_MAX=20); a change of the
 * routed node list nudges the nodes whose share of users moved.
 */
@Injectable()
export class CredentialsNudger implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CredentialsNudger.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private seenVersion: number | null = null;
  private seenShares: Map<string, NodeShare> | null = null;
  /** Where each routed node was last seen, to reach it after it left the list. */
  private addresses = new Map<string, RoutingNode>();
  /** The routed list `addresses` was last filled from. */
  private addressesOf: readonly RoutingNode[] | null = null;
  private secrets = new Map<string, string>();

  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly routing: RoutingService,
    private readonly nodes: NodesRepository,
    private readonly box: SecretBox,
    private readonly locks: AdvisoryLocks,
    private readonly metrics: Metrics,
    @Inject(SETTINGS) private readonly settings: Settings,
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    // Only where the app runs its schedule; tests call `tick()` themselves.
    if (this.scheduler) void this.start();
  }

  /**
   * Ticks every TICK_MS from now; the first round, at once, learns where things stand (the
   * returned promise settles when it has), so that a change made after it is nudged.
   */
  start(): Promise<void> {
    if (this.timer) return Promise.resolve();
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .catch((error: unknown) =>
          this.logger.warn(`credentials nudge round failed: ${(error as Error).message}`),
        )
        .finally(() => (this.running = null));
    }, TICK_MS);
    this.timer.unref();
    const first = this.tick()
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.warn(`credentials nudge round failed: ${(error as Error).message}`),
      );
    this.running = first.finally(() => (this.running = null));
    return first;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round on the instance that holds the lock: nudges what changed since the last; how many. */
  async tick(): Promise<number> {
    return (await this.locks.tryWithLock(NUDGE_LOCK_KEY, () => this.round())) ?? 0;
  }

  private async round(): Promise<number> {
    const shares = await this.routing.allNodeShares();
    const routed = await this.routing.routedNodes();
    // The same list for as long as it does not change: 5,000 nodes are not walked every tick.
    if (routed !== this.addressesOf) {
      for (const node of routed) this.addresses.set(node.id, node);
      this.addressesOf = routed;
    }
    let { version } = await this.credentials.version();
    const targets = new Set<string>();
    if (this.seenShares !== null && this.seenShares !== shares) {
      const moved = sharesMoved(this.seenShares, shares);
      if (moved.length > 0) {
        // Nodes whose share moved take their whole set at their next question; a version past
        // theirs makes their agents ask at once.
        version = await this.credentials.bump();
        for (const id of moved) targets.add(id);
      }
      this.secrets.clear();
    }
    if (this.seenVersion !== null && version > this.seenVersion) {
      const buckets = await this.credentials.changedBuckets(this.seenVersion, version);
      for (const id of await this.routing.nodesOfBuckets(buckets)) targets.add(id);
    }
    this.seenShares = shares;
    this.seenVersion = version;
    if (targets.size === 0) return 0;
    await this.nudge([...targets], version);
    return targets.size;
  }

  private async nudge(nodeIds: string[], version: number): Promise<void> {
    const missing = nodeIds.filter((id) => !this.secrets.has(id));
    if (missing.length > 0) {
      for (const row of await this.nodes.agentSecrets(missing)) {
        this.secrets.set(row.id, this.box.open(row.agentSecretEnc));
      }
    }
    const limiter = new Limiter(NUDGES_AT_ONCE);
    const outcomes = await Promise.all(
      nodeIds.map((id) =>
        limiter.run(async () => {
          const node = this.addresses.get(id);
          const secret = this.secrets.get(id);
          if (!node || !secret) return false;
          return sendNudge(node, { node_id: id, version, mac: nudgeMac(secret, id, version) });
        }),
      ),
    );
    const failed = outcomes.filter((ok) => !ok).length;
    this.metrics.credentialNudges(outcomes.length - failed, failed);
  }
}

/** The nodes whose share is not the same in `after` as in `before` (present in either). */
function sharesMoved(before: Map<string, NodeShare>, after: Map<string, NodeShare>): string[] {
  const moved: string[] = [];
  for (const [id, share] of after) if (before.get(id)?.hash !== share.hash) moved.push(id);
  for (const id of before.keys()) if (!after.has(id)) moved.push(id);
  return moved;
}

/** POSTs the nudge to the agent; an answer from another certificate than the node's is not believed. */
function sendNudge(node: RoutingNode, body: object): Promise<boolean> {
  const url = new URL(admissionUrl(node.host, node.admissionPort));
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const request = https.request(
      {
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: node.admissionPort,
        path: '/v1/credentials/nudge',
        method: 'POST',
        // The agent's certificate is self-signed: it is pinned below instead of chained.
        rejectUnauthorized: false,
        timeout: NUDGE_TIMEOUT_MS,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
        agent: false,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode === 204));
        response.on('error', () => resolve(false));
      },
    );
    request.on('socket', (socket) => {
      socket.once('secureConnect', () => {
        const der = (socket as TLSSocket).getPeerCertificate().raw;
        const pin = der ? createHash('sha256').update(der).digest('hex') : '';
        if (pin !== node.admissionCertSha256)
          request.destroy(new Error('certificate pin mismatch'));
      });
    });
    request.on('timeout', () => request.destroy(new Error('nudge timed out')));
    request.on('error', () => resolve(false));
    request.end(payload);
  });
}
