import { type Log } from './log';
import { LIMITS_BATCH, type ServiceClient } from './service-client';
import type { Sessions } from './sessions';

/**
 * Asks the service which of this node's users may still use it and ends the sessions of the others
 * (a user the service no longer knows is not active either).
 */
export async function enforceLimits(
  sessions: Sessions,
  service: ServiceClient,
  log: Log,
): Promise<number> {
  const users = [...new Set(sessions.live.map((session) => session.userId))];
  const inactive: string[] = [];
  for (let i = 0; i < users.length; i += LIMITS_BATCH) {
    const batch = users.slice(i, i + LIMITS_BATCH);
    const active = new Set(
      (await service.limits(batch)).filter((limit) => limit.active).map((limit) => limit.user_id),
    );
    inactive.push(...batch.filter((user) => !active.has(user)));
  }
  if (inactive.length > 0) {
    log('users_inactive', { users: inactive.length });
    await sessions.endUsers(inactive, 'inactive');
  }
  return inactive.length;
}
