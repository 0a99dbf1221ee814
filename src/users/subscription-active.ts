/**
 * "Subscription active", in TypeScript for one user read into memory and in SQL for statements
 * over many: the subscription's days run (or wait for their first connection, which must be let
 * in to start them) and staff have not blocked the account. It is what the node agents are told
 * (`GET /internal/limits`' `active`), what a node carries a device for and a link connects with,
 * what `GET /users/me` and the staff's view say (`subscription.active`, also false while an
 * on_first_use subscription waits, as the contract says) and what the staff figures and the
 * metrics count. Whether the days alone run (`subscription_expires_at > now()`, blocked or not)
 * is another question, the traffic limit's and a purchase's: see traffic-limit.ts.
 * test/subscription-active.e2e-spec.ts runs both forms on the same users and compares them.
 */

/** The columns of a user the rule reads. */
export interface SubscriptionState {
  subscriptionExpiresAt: Date | null;
  blockedAt: Date | null;
}

/** Whether the user's subscription is active at `now` (the rule above). */
export function isSubscriptionActive(user: SubscriptionState, now = new Date()): boolean {
  return (
    user.blockedAt === null &&
    user.subscriptionExpiresAt !== null &&
    user.subscriptionExpiresAt > now
  );
}

/** SQL: the subscription of user `u` (a table alias, or `users`) is active now. */
export const subscriptionActiveSql = (u: string): string =>
  `(${u}.blocked_at IS NULL AND COALESCE(${u}.subscription_expires_at > now(), false))`;
