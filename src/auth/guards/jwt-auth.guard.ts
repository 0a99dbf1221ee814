import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { isDatabaseUnavailable } from '../../database/postgres-errors';
import { AppError } from '../../common/errors';
import { DocumentedGuard } from '../../common/openapi/answers';
import { IS_PUBLIC } from '../../common/public.decorator';
import type { AuthUser } from './auth-user';

/** Global: every route needs a valid, unrevoked session unless it is marked `@Public()`. */
@Injectable()
@DocumentedGuard({ schemes: ['cookie', 'bearer'], errors: ['UNAUTHENTICATED', 'ACCOUNT_BLOCKED'] })
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
      // What the strategy decided passes as it is. Anything else was thrown while reading the
      // token: jsonwebtoken throws, rather than refusing, on some correctly signed payloads (`null`).
      const decided = error instanceof AppError || error instanceof AuthenticationFault;
      if (decided || isDatabaseUnavailable(error)) throw error;
      throw new AppError('UNAUTHENTICATED', 'missing, expired or revoked session');
    }
  }

  override handleRequest<TUser = AuthUser>(error: unknown, user: TUser | false): TUser {
    if (error) throw authenticationError(error);
    if (!user) throw new AppError('UNAUTHENTICATED', 'missing, expired or revoked session');
    return user;
  }
}

/**
 * What an error while checking a session is answered as: refusals (AppErrors) as they are, a
 * database that is away as a 503 to retry, anything else (a failing statement, a bug) as a fault,
 * a 500, never "signed out".
 */
export function authenticationError(error: unknown): unknown {
  if (error instanceof AppError || isDatabaseUnavailable(error)) return error;
  return new AuthenticationFault(error);
}

/** An unexpected error while checking a session; answered 500 and logged with its cause. */
class AuthenticationFault extends Error {
  constructor(cause: unknown) {
    super('authentication failed unexpectedly', { cause });
    this.name = 'AuthenticationFault';
  }
}
