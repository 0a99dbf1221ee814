/**
 * Who passes each role guard, as plain data and functions: the service's guards
 * (role.guards.ts) apply these, and the web app's console reads the same ones to show a page only
 * to those its routes let in. Pure on purpose (no Nest, no TypeORM): the web app imports it.
 */

/** The staff roles an account may hold (`users.role`); an ordinary account has none. */
export const ROLES = ['owner', 'moderator', 'partner', 'support'] as const;
export type StaffRole = (typeof ROLES)[number];

/** What the guards look at of a signed-in caller. */
export interface GuardedCaller {
  role: StaffRole | null;
  canManageNodes: boolean;
}

/** The roles `can_manage_nodes` means something on (the contract's staff); owners always pass. */
export const NODE_ACCESS_ROLES: readonly StaffRole[] = ['owner', 'moderator'];

/** The role sets of the contract's guards, by the names docs/routes.md gives them. */
export const ROLE_SETS = {
  owner: ['owner'],
  staff: ['owner', 'moderator'],
  /** The ones who handle tickets. */
  support_staff: ['owner', 'moderator', 'support'],
  /** Every staff role: the accounts that sign in with a password. */
  any_staff: ['owner', 'moderator', 'support', 'partner'],
  partner: ['partner'],
} as const satisfies Record<string, readonly StaffRole[]>;

export type RoleSet = keyof typeof ROLE_SETS;

/** Whether a role is in a set; an ordinary account (`null`) is in none. */
export function inRoleSet(role: StaffRole | null, set: RoleSet): boolean {
  return role !== null && (ROLE_SETS[set] as readonly StaffRole[]).includes(role);
}

/** The `node_manage` guard: the owner, or staff granted `can_manage_nodes`. */
export function mayManageNodes(caller: GuardedCaller): boolean {
  return (
    inRoleSet(caller.role, 'owner') ||
    (caller.role !== null && NODE_ACCESS_ROLES.includes(caller.role) && caller.canManageNodes)
  );
}
