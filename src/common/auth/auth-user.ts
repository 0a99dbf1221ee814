import type { Role } from '../../users/entities/user.entity';

/** The signed-in caller, as the authentication guard puts it on the request. */
export interface AuthUser {
  id: string;
  role: Role | null;
  canManageNodes: boolean;
  /** The refresh session the access token belongs to. */
  sessionId: string;
}

export type AuthenticatedRequest = import('express').Request & { user?: AuthUser };
