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

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    try {
      return (await super.canActivate(context)) as boolean;
    } catch (error) {
      // jsonwebtoken throws, rather than refusing, on some correctly signed payloads (`null`).
      throw refusal(error);
    }
  }

  override handleRequest<TUser = AuthUser>(error: unknown, user: TUser | false): TUser {
    if (error || !user) throw refusal(error);
    return user;
  }
}

/** Why a request is not signed in: our own errors and a database that is away (503) as they are. */
function refusal(error: unknown): unknown {
  if (error instanceof AppError || isDatabaseUnavailable(error)) return error;
  return new AppError('UNAUTHENTICATED', 'missing, expired or revoked session');
}
