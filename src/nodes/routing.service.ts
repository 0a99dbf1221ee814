import { Inject, Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user';
import { type BatchQueue, sharedStatement } from '../common/batch-queue';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AccountsRepository } from '../users/accounts.repository';
import { refuseBlocked } from '../users/blocked';
import { NodesRepository, type RoutingNode } from './nodes.repository';
import { SessionTokens, TokenTargets } from './session-token';

/** What a subscribed client connects with: the usable nodes and a one-time token for each. */
export interface RoutingAnswer {
  /**
   * The same list (the same array) for every request that shared a read; with ROUTING_NODES_MAX,
   * the user's share of it.
   */
  nodes: readonly RoutingNode[];
  /** One per node, in the same order. */
  sessionTokens: string[];
}

interface RoutingRead {
  nodes: RoutingNode[];
  targets: TokenTargets;
  /** Each node's id hashed (`idHash`), for choosing a user's share of the nodes. */
  nodeHashes: Uint32Array;
}

/** 32-bit FNV-1a of a text: a fast, well-spread hash of an id (not a secret). */
export function idHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** MurmurHash3's finaliser: every input bit moves every output bit. */
function mix(value: number): number {
  let h = value;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The positions of the `count` nodes that rank highest for this user (rendezvous hashing), in list
 * order. A user gets the same nodes on every request; a node that goes away moves only its own
 * users to their next choice; users spread evenly over the nodes.
 */
export function chooseNodes(userHash: number, nodeHashes: Uint32Array, count: number): number[] {
  if (nodeHashes.length <= count) return Array.from(nodeHashes, (_, i) => i);
  // The best `count` so far, lowest score first (count is small: an insertion is cheap).
  const scores: number[] = [];
  const chosen: number[] = [];
  for (let i = 0; i < nodeHashes.length; i++) {
    const score = mix(userHash ^ nodeHashes[i]);
    if (chosen.length === count && score <= scores[0]) continue;
    if (chosen.length === count) {
      scores.shift();
      chosen.shift();
    }
    let at = 0;
    while (at < scores.length && scores[at] < score) at++;
    scores.splice(at, 0, score);
    chosen.splice(at, 0, i);
  }
  return chosen.sort((a, b) => a - b);
}

@Injectable()
export class RoutingService {
  /**
   * Every client asks on every connect; requests that arrive while a read runs share the next one
   * (a read starts after each of its requests arrived, so a deleted node is never offered after
   * its deletion returned).
   */
  private readonly reads: BatchQueue<null, RoutingRead>;
  /** The last list read, and the routing version it was read at (see `routingVersion`). */
  private last: { version: string; read: RoutingRead } | null = null;

  constructor(
    private readonly nodes: NodesRepository,
    private readonly users: AccountsRepository,
    @Inject(SessionTokens) private readonly tokens: SessionTokens,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.reads = sharedStatement<null, RoutingRead>(
      async (requests) => {
        // The count first: a change that commits between the two reads is in the list, and the
        // next request, seeing a newer count, reads the list again.
        const version = await this.nodes.routingVersion();
        if (this.last?.version !== version) {
          const nodes = await this.nodes.routingNodes();
          this.last = {
            version,
            read: {
              nodes,
              targets: new TokenTargets(nodes.map((node) => node.id)),
              nodeHashes: Uint32Array.from(nodes, (node) => idHash(node.id)),
            },
          };
        }
        const { read } = this.last;
        return requests.map(() => read);
      },
      'too many requests waiting, retry shortly',
      settings.dbPoolWaitMs,
    );
  }

  async routing(caller: AuthUser): Promise<RoutingAnswer> {
    // Authentication read the caller's row a moment ago, in the same request.
    const user = caller.record ? caller.record.user : await this.users.findById(caller.id);
    if (user) refuseBlocked(user);
    const until = user?.subscriptionExpiresAt ?? null;
    if (until === null || until.getTime() <= Date.now()) {
      throw new AppError('SUBSCRIPTION_REQUIRED', 'an active subscription is required');
    }
    const read = await this.reads.submit(null);
    const expiresAt = Math.floor(Date.now() / 1000) + this.settings.sessionTokenTtlS;
    const max = this.settings.routingNodesMax;
    if (max === 0 || read.nodes.length <= max) {
      return {
        nodes: read.nodes,
        sessionTokens: this.tokens.issueAll(caller.id, read.targets, expiresAt),
      };
    }
    const nodes = chooseNodes(idHash(caller.id), read.nodeHashes, max).map((i) => read.nodes[i]);
    const targets = new TokenTargets(nodes.map((node) => node.id));
    return { nodes, sessionTokens: this.tokens.issueAll(caller.id, targets, expiresAt) };
  }
}
