import type { User } from '../api/client';

/**
 * Who may open which console page: the same guards the service applies to the routes behind it
 * (docs/routes.md). A page hidden here still meets the service's 403 when called anyway.
 */
export const access = {
  /** `owner` guard. */
  owner: (user: User) => user.role === 'owner',
  /** `staff` guard: owner and moderators. */
  staff: (user: User) => user.role === 'owner' || user.role === 'moderator',
  /** `support_staff` guard: owner, moderators and support. */
  support: (user: User) =>
    user.role === 'owner' || user.role === 'moderator' || user.role === 'support',
  /** `any_staff` guard: every staff role (their own second factor). */
  anyStaff: (user: User) => user.role !== null,
  /** `node_manage` guard: the owner, or a moderator given node access. */
  nodes: (user: User) =>
    user.role === 'owner' || (user.role === 'moderator' && user.can_manage_nodes),
} as const;
