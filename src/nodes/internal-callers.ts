import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '../common/secrets';
import { canonicalUuid } from '../common/uuid';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { NodeSecretLookup } from './node-secret-lookup';

/** What INTERNAL_SECRET speaks for: every node (the operator's own tools). */
export const EVERY_NODE = Symbol('every node');

/**
 * Whom an `X-Internal-Secret` speaks for: every node (INTERNAL_SECRET), one node (that node's own
 * secret: its id), or no one (null). The guard of the internal routes, the large-body allowance
 * and the agents' lanes all ask here.
 */
@Injectable()
export class InternalCallers {
  private readonly internalDigest: Buffer;

  constructor(
    private readonly nodeSecrets: NodeSecretLookup,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.internalDigest = sha256(settings.internalSecret);
  }

  async speaksFor(given: string | undefined): Promise<string | typeof EVERY_NODE | null> {
    if (!given) return null;
    // One hash serves both: compared in constant time with INTERNAL_SECRET's (equal lengths, so
    // neither secret's length leaks), then the key a node's secret is found by.
    const digest = sha256(given);
    if (timingSafeEqual(digest, this.internalDigest)) return EVERY_NODE;
    return this.nodeSecrets.nodeOf(digest.toString('hex'));
  }

  /**
   * Whether `given` may ask about node `nodeId` (a UUID in either case) on a route of its own
   * node only: INTERNAL_SECRET, or that node's own secret.
   */
  async speaksForNode(given: string | undefined, nodeId: string): Promise<boolean> {
    const speaksFor = await this.speaksFor(given);
    return speaksFor === EVERY_NODE || (speaksFor !== null && speaksFor === canonicalUuid(nodeId));
  }
}
