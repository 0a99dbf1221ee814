import { Injectable } from '@nestjs/common';
import { NodesRepository } from './nodes.repository';

/**
 * How long a secret's node is believed without asking the database. A node deleted on another
 * instance (or whose secret changed) stops being accepted here within this time; on this instance
 * at once.
 */
export const NODE_SECRET_CACHE_MS = 5_000;
/** Secrets remembered at most (the oldest forgotten first): far above any real fleet. */
const MAX_REMEMBERED = 10_000;
/**
 * Finds the node a presented `X-Internal-Secret` belongs to, by the secret's SHA-256. Every node
 * reports and validates through it, so a secret found is remembered for a few seconds (bounded);
 * a secret not found is asked again each time (one indexed read).
 */
@Injectable()
export class NodeSecretLookup {
  private readonly known = new Map<string, { nodeId: string; until: number }>();

  constructor(private readonly nodes: NodesRepository) {}

  /** The live node whose secret has this SHA-256 (hex, see `nodeSecretHash`), or null. */
  async nodeOf(hash: string, now = Date.now()): Promise<string | null> {
    const hit = this.known.get(hash);
    if (hit !== undefined) {
      if (hit.until > now) return hit.nodeId;
      this.known.delete(hash);
    }
    const nodeId = await this.nodes.nodeBySecretHash(hash);
    if (nodeId !== null) {
      if (this.known.size >= MAX_REMEMBERED) {
        this.known.delete(this.known.keys().next().value!);
      }
      this.known.set(hash, { nodeId, until: now + NODE_SECRET_CACHE_MS });
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
