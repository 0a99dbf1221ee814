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
  /** The same list (the same array) for every request that shared a read. */
  nodes: readonly RoutingNode[];
  /** One per node, in the same order. */
  sessionTokens: string[];
}

interface RoutingRead {
  nodes: RoutingNode[];
  targets: TokenTargets;
}

@Injectable()
export class RoutingService {
  /**
   * Every client asks on every connect; requests that arrive while a read runs share the next one
   * (a read starts after each of its requests arrived, so a deleted node is never offered after
   * its deletion returned).
   */
  private readonly reads: BatchQueue<null, RoutingRead>;

  constructor(
    private readonly nodes: NodesRepository,
    private readonly users: AccountsRepository,
    @Inject(SessionTokens) private readonly tokens: SessionTokens,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.reads = sharedStatement<null, RoutingRead>(
      async (requests) => {
        const nodes = await this.nodes.routingNodes();
        const read = { nodes, targets: new TokenTargets(nodes.map((node) => node.id)) };
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
    const { nodes, targets } = await this.reads.submit(null);
    const expiresAt = Math.floor(Date.now() / 1000) + this.settings.sessionTokenTtlS;
    return { nodes, sessionTokens: this.tokens.issueAll(caller.id, targets, expiresAt) };
  }
}
