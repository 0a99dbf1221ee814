import type { ExecutionContext } from '@nestjs/common';
import type { StaffRole as Role } from './role-sets';
import { AppError } from '../../common/errors';
import type { AuthUser } from './auth-user';
import {
  NodeManageGuard,
  OwnerGuard,
  PartnerGuard,
  StaffGuard,
  SupportStaffGuard,
} from './role.guards';

function contextFor(user: AuthUser | undefined): ExecutionContext {
  return { switchToHttp: () => ({ getRequest: () => ({ user }) }) } as unknown as ExecutionContext;
}

function verdict(guard: { canActivate(c: ExecutionContext): boolean }, user?: AuthUser): string {
  try {
    return guard.canActivate(contextFor(user)) ? 'pass' : 'refuse';
  } catch (error) {
    return error instanceof AppError ? error.code : 'threw';
  }
}

const caller = (role: Role | null, canManageNodes = false): AuthUser => ({
  id: 'u',
  role,
  canManageNodes,
  sessionId: 's',
});

describe('role guards', () => {
  it('node_manage: owner, or a moderator with can_manage_nodes; the flag means nothing elsewhere', () => {
    const guard = new NodeManageGuard();
    expect(verdict(guard, caller('owner'))).toBe('pass');
    expect(verdict(guard, caller('moderator', true))).toBe('pass');
    expect(verdict(guard, caller('moderator'))).toBe('FORBIDDEN');
    expect(verdict(guard, caller('support', true))).toBe('FORBIDDEN');
    expect(verdict(guard, caller('partner', true))).toBe('FORBIDDEN');
    expect(verdict(guard, caller(null, true))).toBe('FORBIDDEN');
    expect(verdict(guard)).toBe('UNAUTHENTICATED');
  });

  it('the role sets of the contract', () => {
    const roles: (Role | null)[] = ['owner', 'moderator', 'support', 'partner', null];
    const passing = (guard: { canActivate(c: ExecutionContext): boolean }) =>
      roles.filter((role) => verdict(guard, caller(role)) === 'pass');
    expect(passing(new OwnerGuard())).toEqual(['owner']);
    expect(passing(new StaffGuard())).toEqual(['owner', 'moderator']);
    expect(passing(new SupportStaffGuard())).toEqual(['owner', 'moderator', 'support']);
    expect(passing(new PartnerGuard())).toEqual(['partner']);
  });
});
