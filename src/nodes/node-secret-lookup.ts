import { Injectable } from '@nestjs/common';
import { CachedRead } from '../common/concurrency/cached-read';
import { NodesRepository } from './nodes.repository';

/**
 * How often an instance reads the nodes' change counter (`routing_version`, which moves when a
 * node is added, deleted or its secret replaced): a node deleted on another instance, or whose
 * secret changed, stops being accepted here within this time; on this instance at once.
 */
export const NODE_SECRET_STALE_MS = 1_000;
/** How long a secret's node is believed at most, even while the counter stands still. */
export const NODE_SECRET_CACHE_MS = 10 * 60_000;
/** Secrets remembered at most (the oldest forgotten first): far above any real fleet. */
const MAX_REMEMBERED = 10_000;

interface Remembered {
  nodeId: string;
  /** The change counter when the node was read: the entry holds while it is unchanged. */
  version: string;
  until: number;
}

/**
 * Finds the node a presented `X-Internal-Secret` belongs to, by the secret's SHA-256. Every node
 * reports and validates through it, so a secret found is remembered (bounded) for as long as no
 * node has changed, which the instance learns by one one-row read a second, whatever the number of
 * nodes; a secret not found is asked again each time (one indexed read).
 */
@Injectable()
export class NodeSecretLookup {
  private readonly known = new Map<string, Remembered>();
  private readonly version: CachedRead<string>;

  constructor(private readonly nodes: NodesRepository) {
    this.version = new CachedRead(() => this.nodes.routingVersion(), NODE_SECRET_STALE_MS);
  }

  /** The live node whose secret has this SHA-256 (hex, see `nodeSecretHash`), or null. */
  async nodeOf(hash: string, now = Date.now()): Promise<string | null> {
    // The counter first: a change that commits between the two reads moves it again, so the
    // entry is read anew at the next check.
    const version = await this.version.get();
    const hit = this.known.get(hash);
    if (hit !== undefined) {
      if (hit.version === version && hit.until > now) return hit.nodeId;
      this.known.delete(hash);
    }
    const nodeId = await this.nodes.nodeBySecretHash(hash);
    if (nodeId !== null) {
      if (this.known.size >= MAX_REMEMBERED) {
        this.known.delete(this.known.keys().next().value!);
      }
      this.known.set(hash, { nodeId, version, until: now + NODE_SECRET_CACHE_MS });
    }
    return nodeId;
  }

  /** Forgets the node's secret on this instance (deleted, or its secret replaced). */
  forgetNode(nodeId: string): void {
    for (const [hash, entry] of this.known) {
      if (entry.nodeId === nodeId) this.known.delete(hash);
    }
  }
}
