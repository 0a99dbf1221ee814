import type { AuthUser } from '../auth/guards/auth-user';
import { AppError } from '../common/errors';
import type { Role } from '../users/entities/user.entity';

/**
 * Who staff may act on: never their own account (a moderator would otherwise extend its own
 * subscription, lift its own traffic limit or reset its own traffic, audited but allowed), and a
 * staff account only when they are the owner. 403 FORBIDDEN otherwise. Called with the target's
 * row locked, before anything changes.
 */
export function refuseSelfOrStaff(
  actor: Pick<AuthUser, 'id' | 'role'>,
  target: { id: string; role: Role | null },
): void {
  if (target.id === actor.id) {
    throw new AppError('FORBIDDEN', 'staff cannot act on their own account');
  }
  if (target.role !== null && actor.role !== 'owner') {
    throw new AppError('FORBIDDEN', 'only the owner may act on staff accounts');
  }
}
