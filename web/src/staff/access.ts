import { inRoleSet, mayManageNodes, type StaffRole } from '../../../src/auth/guards/role-sets';

/** What the console's page rules read of the signed-in account (`GET /users/me`). */
export interface ConsoleAccount {
  role: StaffRole | null;
  can_manage_nodes: boolean;
}

/**
 * Who may open which console page: the same role sets the service's guards apply to the routes
 * behind it (src/auth/guards/role-sets.ts, docs/routes.md). A page hidden here still meets the
 * service's 403 when called anyway.
 */
export const access = {
  /** `owner` guard. */
  owner: (user: ConsoleAccount) => inRoleSet(user.role, 'owner'),
  /** `staff` guard: owner and moderators. */
  staff: (user: ConsoleAccount) => inRoleSet(user.role, 'staff'),
  /** `support_staff` guard: owner, moderators and support. */
  support: (user: ConsoleAccount) => inRoleSet(user.role, 'support_staff'),
  /** `any_staff` guard: every staff role (their own second factor). */
  anyStaff: (user: ConsoleAccount) => inRoleSet(user.role, 'any_staff'),
  /** `node_manage` guard: the owner, or a moderator given node access. */
  nodes: (user: ConsoleAccount) =>
    mayManageNodes({ role: user.role, canManageNodes: user.can_manage_nodes }),
} as const;
