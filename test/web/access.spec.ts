import type { ExecutionContext } from '@nestjs/common';
import type { AuthUser } from '../../src/auth/guards/auth-user';
import { ROLE_SETS } from '../../src/auth/guards/role-sets';
import {
  AnyStaffGuard,
  NodeManageGuard,
  OwnerGuard,
  PartnerGuard,
  StaffGuard,
  SupportStaffGuard,
} from '../../src/auth/guards/role.guards';
import { ROLES, type Role } from '../../src/users/entities/user.entity';
import { access } from '../../web/src/staff/access';

type Guard = { canActivate(context: ExecutionContext): boolean };

function passes(guard: Guard, user: AuthUser): boolean {
  const context = {
    switchToHttp: () => ({ getRequest: () => ({ user }) }),
  } as unknown as ExecutionContext;
  try {
    return guard.canActivate(context);
  } catch {
    return false;
  }
}

/** Every account the guards tell apart: each role and none, with node access and without. */
const callers = ([...ROLES, null] as (Role | null)[]).flatMap((role) =>
  [false, true].map((canManageNodes) => ({ role, canManageNodes })),
);

/** The console's page rules beside the guard of the routes behind them. */
const pairs: [keyof typeof access, Guard][] = [
  ['owner', new OwnerGuard()],
  ['staff', new StaffGuard()],
  ['support', new SupportStaffGuard()],
  ['anyStaff', new AnyStaffGuard()],
  ['nodes', new NodeManageGuard()],
];

describe('the console’s page rules and the service’s guards', () => {
  it.each(pairs)('access.%s lets in exactly whom its guard lets in', (rule, guard) => {
    for (const { role, canManageNodes } of callers) {
      const server = passes(guard, { id: 'u', sessionId: 's', role, canManageNodes });
      const console = access[rule]({ role, can_manage_nodes: canManageNodes });
      expect({ role, canManageNodes, console }).toEqual({ role, canManageNodes, console: server });
    }
  });

  it('the role sets name every role the accounts table allows, and the partner guard its own', () => {
    expect([...ROLE_SETS.any_staff].sort()).toEqual([...ROLES].sort());
    const partners = callers.filter((caller) =>
      passes(new PartnerGuard(), { id: 'u', sessionId: 's', ...caller }),
    );
    expect(new Set(partners.map((caller) => caller.role))).toEqual(new Set(['partner']));
  });
});
