import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { AppError } from '../../common/errors';
import type { AuthenticatedRequest, AuthUser } from './auth-user';

/** The signed-in caller. Only on routes behind the authentication guard. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): AuthUser => {
    const user = ctx.switchToHttp().getRequest<AuthenticatedRequest>().user;
    if (!user) throw new AppError('UNAUTHENTICATED', 'sign in first');
    return user;
  },
);
