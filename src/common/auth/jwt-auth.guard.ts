import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { AppError } from '../errors';
import { IS_PUBLIC } from '../public.decorator';
import type { AuthUser } from './auth-user';

/** Global: every route needs a valid, unrevoked session unless it is marked `@Public()`. */
@Injectable()
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
    if (error instanceof AppError) throw error;
    if (error || !user)
      throw new AppError('UNAUTHENTICATED', 'missing, expired or revoked session');
    return user;
  }
}
