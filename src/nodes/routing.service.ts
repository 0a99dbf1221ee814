import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { AuthUser } from '../auth/guards/auth-user';
import { type BatchQueue, sharedStatement } from '../common/concurrency/batch-queue';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AccountsRepository } from '../users/accounts.repository';
import { refuseBlocked } from '../users/blocked';
import { SHARE_BUCKETS, shareBucket } from '../devices/share';
import { NodesRepository, type RoutingNode } from './nodes.repository';
import { SessionTokens, TokenTargets } from './session-token';

/** What a subscribed client connects with: the usable nodes and a one-time token for each. */
export interface RoutingAnswer {
  /**
   * The same list (the same array) for every request that shared a read, or with
   * ROUTING_NODES_MAX for every request of the same share bucket: the answer's JSON is built
   * around it once (`RoutingEntryResponse.serialize`).
   */
  nodes: readonly RoutingNode[];
  /** One per node, in the same order. */
  sessionTokens: string[];
}

interface RoutingRead {
  nodes: RoutingNode[];
  targets: TokenTargets;
  /** Each node's id hashed (`idHash`), for choosing a bucket's share of the nodes. */
  nodeHashes: Uint32Array;
  /** Each bucket's share (positions in `nodes`), chosen when first asked for. */
  shares: (number[] | undefined)[];
  /** Each bucket's share as routing answers it, made on the first request of the bucket. */
  shareLists: (ShareList | undefined)[];
  /** Each node's buckets, made on the first question about a node (`nodeShare`). */
  nodeBuckets?: Promise<Map<string, number[]>>;
  /** `allNodeShares`, made once per list. */
  allShares?: Promise<Map<string, NodeShare>>;
}

interface ShareList {
  nodes: RoutingNode[];
  targets: TokenTargets;
}

/** The users a node carries: every user (`all`), or those of its buckets. */
export interface NodeShare {
  /** The node list this share was taken from: the same object while the list is the same. */
  list: object;
  all: boolean;
  /** Ascending; empty when `all` or when the node is not routed to. */
  buckets: number[];
  /** Names the share: equal texts, equal shares. */
  hash: string;
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

/** The rendezvous key of a share bucket. */
const bucketKey = (bucket: number): number => idHash(`bucket:${bucket}`);

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
              shares: new Array<number[] | undefined>(SHARE_BUCKETS),
              shareLists: new Array<ShareList | undefined>(SHARE_BUCKETS),
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
    // The routing counter came with the caller's session, read after the request arrived.
    const read = await this.readAt(caller.record?.routingVersion);
    const expiresAt = Math.floor(Date.now() / 1000) + this.settings.sessionTokenTtlS;
    if (this.everyNode(read)) {
      return {
        nodes: read.nodes,
        sessionTokens: this.tokens.issueAll(caller.id, read.targets, expiresAt),
      };
    }
    const { nodes, targets } = this.shareList(read, shareBucket(caller.id));
    return { nodes, sessionTokens: this.tokens.issueAll(caller.id, targets, expiresAt) };
  }

  /**
   * The nodes of the user's share now, as routing lists them (the subscription link's nodes);
   * `routingVersion` as for `nodeShare`.
   */
  async share(userId: string, routingVersion?: string): Promise<readonly RoutingNode[]> {
    const read = await this.readAt(routingVersion);
    if (this.everyNode(read)) return read.nodes;
    return this.shareList(read, shareBucket(userId)).nodes;
  }

  /**
   * The buckets of users whose share names this node now (`all`: every user's does);
   * `routingVersion`, when given, is the routing counter the caller read a moment ago.
   */
  async nodeShare(nodeId: string, routingVersion?: string): Promise<NodeShare> {
    const read = await this.readAt(routingVersion);
    const share = (await this.sharesOf(read)).get(nodeId);
    return share ?? { list: read, all: false, buckets: [], hash: shareHash([]) };
  }

  /** The nodes whose share holds any of these buckets. */
  async nodesOfBuckets(buckets: Iterable<number>): Promise<string[]> {
    const read = await this.reads.submit(null);
    if (this.everyNode(read)) return read.nodes.map((node) => node.id);
    const ids = new Set<string>();
    for (const bucket of buckets) {
      for (const i of this.bucketShare(read, bucket)) ids.add(read.nodes[i].id);
    }
    return [...ids];
  }

  /** The nodes routing lists now. */
  async routedNodes(): Promise<readonly RoutingNode[]> {
    return (await this.reads.submit(null)).nodes;
  }

  /**
   * Every routed node with its share, for telling the nodes whose share moved: the same Map for as
   * long as the node list is the same.
   */
  async allNodeShares(): Promise<Map<string, NodeShare>> {
    return this.sharesOf(await this.reads.submit(null));
  }

  /** Every node's share of `read`, made once (see `bucketsByNode`); callers meanwhile share it. */
  private sharesOf(read: RoutingRead): Promise<Map<string, NodeShare>> {
    read.allShares ??= this.makeShares(read);
    return read.allShares;
  }

  private async makeShares(read: RoutingRead): Promise<Map<string, NodeShare>> {
    const shares = new Map<string, NodeShare>();
    const byNode = this.everyNode(read) ? null : await this.bucketsByNode(read);
    for (const [n, node] of read.nodes.entries()) {
      if (n > 0 && n % NODES_PER_TURN === 0) await nextTurn();
      const buckets = byNode?.get(node.id) ?? [];
      shares.set(
        node.id,
        byNode
          ? { list: read, all: false, buckets, hash: shareHash(buckets) }
          : { list: read, all: true, buckets, hash: 'all' },
      );
    }
    return shares;
  }

  /**
   * The node list at the routing counter the caller read along with its own statement (a read
   * spared when it is the last one read), else read now.
   */
  private async readAt(routingVersion: string | undefined): Promise<RoutingRead> {
    const last = this.last;
    if (routingVersion !== undefined && last?.version === routingVersion) return last.read;
    return this.reads.submit(null);
  }

  private everyNode(read: RoutingRead): boolean {
    const max = this.settings.routingNodesMax;
    return max === 0 || read.nodes.length <= max;
  }

  private bucketShare(read: RoutingRead, bucket: number): number[] {
    let share = read.shares[bucket];
    if (share === undefined) {
      share = chooseNodes(bucketKey(bucket), read.nodeHashes, this.settings.routingNodesMax);
      read.shares[bucket] = share;
    }
    return share;
  }

  /** A bucket's share as routing answers it: the same arrays for every request of the bucket. */
  private shareList(read: RoutingRead, bucket: number): ShareList {
    let list = read.shareLists[bucket];
    if (list === undefined) {
      const nodes = this.bucketShare(read, bucket).map((i) => read.nodes[i]);
      list = { nodes, targets: new TokenTargets(nodes.map((node) => node.id)) };
      read.shareLists[bucket] = list;
    }
    return list;
  }

  /**
   * Every bucket's share turned around, once per node list. For 5,000 nodes that is 80-300 ms of
   * CPU (20 million rendezvous scores), which in one piece held every request behind it and took
   * the full fleet's p99 past 100 ms (bench/RESULTS.md); it is made `BUCKETS_PER_TURN` buckets at
   * a time, the event loop serving requests in between.
   */
  private bucketsByNode(read: RoutingRead): Promise<Map<string, number[]>> {
    read.nodeBuckets ??= (async () => {
      const byNode = new Map<string, number[]>();
      for (let bucket = 0; bucket < SHARE_BUCKETS; bucket++) {
        if (bucket > 0 && bucket % BUCKETS_PER_TURN === 0) await nextTurn();
        for (const i of this.bucketShare(read, bucket)) {
          const id = read.nodes[i].id;
          const list = byNode.get(id);
          if (list) list.push(bucket);
          else byNode.set(id, [bucket]);
        }
      }
      return byNode;
    })();
    return read.nodeBuckets;
  }
}

/** Buckets scored in one turn of the event loop: 5,000 nodes, about 2-5 ms. */
const BUCKETS_PER_TURN = 64;
/** Nodes whose share is named (a hash each) in one turn of the event loop. */
const NODES_PER_TURN = 500;

/** The rest of this turn of the event loop: what it has read is served first. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A short name of a set of buckets (SHA-256 of the ascending list). */
function shareHash(buckets: readonly number[]): string {
  return createHash('sha256').update(Uint16Array.from(buckets)).digest('base64url').slice(0, 22);
}
