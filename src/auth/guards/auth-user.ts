import type { StaffRole as Role } from './role-sets';
import type { UserWithDefaults } from '../../users/accounts.repository';

/** The signed-in caller, as the authentication guard puts it on the request. */
export interface AuthUser {
  id: string;
  role: Role | null;
  canManageNodes: boolean;
  /** The refresh session the access token belongs to. */
  sessionId: string;
  /**
   * The caller's row and limits as authentication read them, so a route about the caller need
   * not read them again. Set by the authentication guard; absent in callers made by hand.
   */
  record?: UserWithDefaults;
}

export type AuthenticatedRequest = import('express').Request & { user?: AuthUser };
