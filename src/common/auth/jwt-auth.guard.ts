import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { isDatabaseUnavailable } from '../../database/postgres-errors';
import { AppError } from '../errors';
import { DocumentedGuard } from '../openapi/answers';
import { IS_PUBLIC } from '../public.decorator';
import type { AuthUser } from './auth-user';

/** Global: every route needs a valid, unrevoked session unless it is marked `@Public()`. */
@Injectable()
@DocumentedGuard({ schemes: ['cookie', 'bearer'], errors: ['UNAUTHENTICATED'] })
export class JwtAuthGuard extends AuthGuard('jwt') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    return super.canActivate(context);
  }

  override handleRequest<TUser = AuthUser>(error: unknown, user: TUser | false): TUser {
    // A database that is away is a 503 to retry, not a signed-out session.
    if (error instanceof AppError || isDatabaseUnavailable(error)) throw error;
    if (error || !user)
      throw new AppError('UNAUTHENTICATED', 'missing, expired or revoked session');
    return user;
  }
}
