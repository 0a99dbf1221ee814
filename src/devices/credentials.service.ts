import { Inject, Injectable } from '@nestjs/common';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { type NodeShare, RoutingService } from '../nodes/routing.service';
import { ChangeLogCache } from './change-log-cache';
import { type CredentialRow, CredentialsRepository } from './credentials.repository';

/** A credential as a node adds it to its core. */
export interface Credential {
  device_id: string;
  user_id: string;
  vless_id: string;
  expires_at: string | null;
}

/** The answer of `GET /internal/credentials`. */
export interface CredentialsAnswer {
  version: number;
  /** Replace the whole set with `upsert`. */
  full: boolean;
  upsert: Credential[];
  remove: string[];
}

const toCredential = (row: CredentialRow): Credential => ({
  device_id: row.deviceId,
  user_id: row.userId,
  vless_id: row.vlessId,
  expires_at: row.expiresAt?.toISOString() ?? null,
});

/**
 * Which device ids each node carries: those of the users whose routing share names the node
 * (every user's when routing lists every node), carried while the account is active, not blocked,
 * under its traffic limit, and the device among its first `device_limit`.
 *
 * A node asks with the version it has. It gets only what changed since (the users of its buckets
 * in the change log, read through the log's primary key), or its whole set (read through the
 * devices' bucket index) when it has none, when its version is older than the log or the last
 * change that concerns everyone, or when its share of the users moved since it last asked.
 */
@Injectable()
export class CredentialsService {
  private readonly known = new Map<string, { hash: string; sinceVersion: number }>();
  private knownFor: object | null = null;
  private readonly changeLog: ChangeLogCache;

  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly routing: RoutingService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.changeLog = new ChangeLogCache((after, upTo) =>
      this.credentials.loggedChanges(after, upTo),
    );
  }

  async forNode(nodeId: string, since: number): Promise<CredentialsAnswer> {
    // The counter first: every change numbered up to it has committed (see migration 0021).
    const { version, fullFrom, routing } = await this.credentials.version();
    const share = await this.routing.nodeShare(nodeId, routing);
    const known = await this.knownShare(nodeId, share);
    let full = since <= 0 || since > version || since < fullFrom;
    if (known?.hash !== share.hash) {
      await this.credentials.saveNodeShare(nodeId, share.hash, version);
      this.known.set(nodeId, { hash: share.hash, sinceVersion: version });
      full = true;
    } else if (since < known.sinceVersion) {
      full = true;
    }
    if (!share.all && share.buckets.length === 0) {
      return { version, full: true, upsert: [], remove: [] };
    }
    const buckets = share.all ? null : share.buckets;
    if (full) {
      const rows = await this.read(buckets === null ? null : { buckets });
      return {
        version,
        full,
        upsert: rows.filter((row) => row.carried).map(toCredential),
        remove: [],
      };
    }
    // Nothing logged since the node's version concerns its users.
    if (!(await this.changeLog.mayConcern(since, version, buckets))) {
      return { version, full, upsert: [], remove: [] };
    }
    const changed = await this.credentials.changes(since, version, buckets);
    const rows = changed.users.length > 0 ? await this.read({ users: changed.users }) : [];
    const upsert: Credential[] = [];
    const remove = new Set(changed.removed);
    for (const row of rows) {
      if (row.carried) upsert.push(toCredential(row));
      else remove.add(row.deviceId);
    }
    return { version, full, upsert, remove: [...remove] };
  }

  /**
   * The share the node was last answered for. Kept in memory for as long as the routed node list
   * stays the same (`share.list` is then the same object), which spares a read per question of a
   * node whose set did not change; a new list reads it again, as another instance may have moved it.
   */
  private async knownShare(
    nodeId: string,
    share: NodeShare,
  ): Promise<{ hash: string; sinceVersion: number } | null> {
    if (this.knownFor !== share.list) {
      this.known.clear();
      this.knownFor = share.list;
    }
    const cached = this.known.get(nodeId);
    if (cached?.hash === share.hash) return cached;
    const stored = await this.credentials.nodeShare(nodeId);
    if (stored) this.known.set(nodeId, stored);
    return stored;
  }

  private read(
    scope: Parameters<CredentialsRepository['credentials']>[0],
  ): Promise<CredentialRow[]> {
    return this.credentials.credentials(
      scope,
      this.settings.deviceLimitDefault,
      this.settings.trafficLimitDefaultBytes,
    );
  }
}
