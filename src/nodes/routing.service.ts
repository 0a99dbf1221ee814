import { Inject, Injectable } from '@nestjs/common';
import { sharedStatement } from '../common/batch-queue';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { NodesRepository, type RoutingNode } from './nodes.repository';
import { SessionTokens } from './session-token';

export interface RoutingEntry {
  node: RoutingNode;
  sessionToken: string;
}

/** What a subscribed client connects with: every usable node and a one-time token for each. */
@Injectable()
export class RoutingService {
  /**
   * Every client asks on every connect; requests that arrive while a read runs share the next one
   * (a read starts after each of its requests arrived, so a deleted node is never offered after
   * its deletion returned).
   */
  private readonly reads = sharedStatement<string, { active: boolean; nodes: RoutingNode[] }>(
    async (userIds) => {
      const { active, nodes } = await this.nodes.routing([...new Set(userIds)]);
      return userIds.map((id) => ({ active: active.has(id), nodes }));
    },
    'too many requests waiting, retry shortly',
  );

  constructor(
    private readonly nodes: NodesRepository,
    @Inject(SessionTokens) private readonly tokens: SessionTokens,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async routing(userId: string): Promise<RoutingEntry[]> {
    const { active, nodes } = await this.reads.submit(userId);
    if (!active) throw new AppError('SUBSCRIPTION_REQUIRED', 'an active subscription is required');
    const expiresAt = Math.floor(Date.now() / 1000) + this.settings.sessionTokenTtlS;
    return nodes.map((node) => ({
      node,
      sessionToken: this.tokens.issue(userId, node.id, expiresAt),
    }));
  }
}
