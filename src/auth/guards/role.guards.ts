import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  Optional,
} from '@nestjs/common';
import type { Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { AppError } from '../../common/errors';
import { DocumentedGuard } from '../../common/openapi/answers';
import type { AuthenticatedRequest, AuthUser } from './auth-user';
import { inRoleSet, mayManageNodes } from './role-sets';

export { NODE_ACCESS_ROLES } from './role-sets';

/**
 * Passes the signed-in callers `allows` accepts; 403 FORBIDDEN for the others. With
 * `STAFF_TOTP_REQUIRED`, a staff account without a second factor is refused too, except where
 * the guard lets it enrol one.
 */
@DocumentedGuard({ errors: ['UNAUTHENTICATED', 'FORBIDDEN'] })
abstract class CallerGuard implements CanActivate {
  /** Routes a staff account may use before it has the second factor the operator requires. */
  protected readonly enrolment: boolean = false;

  constructor(@Optional() @Inject(SETTINGS) private readonly settings?: Settings) {}

  protected abstract allows(user: AuthUser): boolean;

  canActivate(context: ExecutionContext): boolean {
    const user = context.switchToHttp().getRequest<AuthenticatedRequest>().user;
    if (!user) throw new AppError('UNAUTHENTICATED', 'sign in first');
    if (!this.allows(user)) throw new AppError('FORBIDDEN', 'your role may not do this');
    if (
      this.settings?.staffTotpRequired === true &&
      !this.enrolment &&
      user.role !== null &&
      user.record?.secondFactorOn !== true
    ) {
      throw new AppError(
        'FORBIDDEN',
        'this service requires a second factor for staff: turn it on in the console (Security) first',
      );
    }
    return true;
  }
}

/** owner */
@Injectable()
export class OwnerGuard extends CallerGuard {
  protected allows(user: AuthUser): boolean {
    return inRoleSet(user.role, 'owner');
  }
}

/** owner, moderator */
@Injectable()
export class StaffGuard extends CallerGuard {
  protected allows(user: AuthUser): boolean {
    return inRoleSet(user.role, 'staff');
  }
}

/** owner, moderator, support: the ones who handle tickets. */
@Injectable()
export class SupportStaffGuard extends CallerGuard {
  protected allows(user: AuthUser): boolean {
    return inRoleSet(user.role, 'support_staff');
  }
}

/** owner, or staff granted `can_manage_nodes`; the flag means nothing on other roles. */
@Injectable()
export class NodeManageGuard extends CallerGuard {
  protected allows(user: AuthUser): boolean {
    return mayManageNodes(user);
  }
}

/**
 * Any staff role: owner, moderator, support, partner (the accounts that sign in with a password);
 * the second factor's own routes, so they pass also before the factor `STAFF_TOTP_REQUIRED` asks for.
 */
@Injectable()
export class AnyStaffGuard extends CallerGuard {
  protected override readonly enrolment = true;

  protected allows(user: AuthUser): boolean {
    return inRoleSet(user.role, 'any_staff');
  }
}

/** partner */
@Injectable()
export class PartnerGuard extends CallerGuard {
  protected allows(user: AuthUser): boolean {
    return inRoleSet(user.role, 'partner');
  }
}
