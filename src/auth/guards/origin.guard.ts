import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { KeyObject } from 'node:crypto';
import { accessTokenKey, verifyAccessToken } from '../sessions.service';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { AppError } from '../../common/errors';
import { DocumentedGuard } from '../../common/openapi/answers';
import { IS_PUBLIC } from '../../common/public.decorator';
import { ACCESS_COOKIE, REFRESH_COOKIE } from './cookies';

export const ORIGIN_REQUIRED = 'auth:origin-required';

/** A public route that is nevertheless cookie-authenticated (`POST /auth/refresh`). */
export const CookieAuthenticated = (): MethodDecorator => SetMetadata(ORIGIN_REQUIRED, true);

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The origin check (CSRF), run before any rule of the route. A mutating call authenticated by
 * cookie must come from a trusted origin (its Origin header, else its Referer): one in
 * CSRF_TRUSTED_ORIGINS, or the service's own (see `ownOrigins`), so pages the service serves itself,
 * such as the OpenAPI UI, can sign in and write.
 * Calls authenticated by a valid Bearer token are not checked (a browser never adds one across
 * origins); a present but invalid one skips nothing, and authentication then refuses it (401).
 * Public calls are checked only when they name an origin.
 */
@Injectable()
@DocumentedGuard({ errors: ['ORIGIN_REJECTED'] })
export class OriginGuard implements CanActivate {
  private readonly key: KeyObject;
  private readonly publicOrigin: string;

  constructor(
    private readonly reflector: Reflector,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.key = accessTokenKey(settings);
    this.publicOrigin = new URL(settings.publicApiUrl).origin;
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (!MUTATING.has(request.method)) return true;

    const targets = [context.getHandler(), context.getClass()];
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) ?? false;
    const cookieRoute =
      this.reflector.getAllAndOverride<boolean>(ORIGIN_REQUIRED, targets) ?? false;
    if (!cookieRoute && this.validBearer(request)) return true;
    const origin = originOf(request);

    const cookies = (request.cookies ?? {}) as Record<string, unknown>;
    const carriesSession = ACCESS_COOKIE in cookies || REFRESH_COOKIE in cookies;
    const mustCheck = isPublic && !cookieRoute ? origin !== undefined : carriesSession;
    if (!mustCheck) return true;

    if (origin === undefined || !this.trusted(origin, request)) {
      throw new AppError(
        'ORIGIN_REJECTED',
        "request origin is not trusted: only the service's own origin and those in " +
          'CSRF_TRUSTED_ORIGINS may write with session cookies',
      );
    }
    return true;
  }

  private trusted(origin: string, request: Request): boolean {
    return (
      this.settings.csrfTrustedOrigins.includes(origin) || this.ownOrigins(request).has(origin)
    );
  }

  /**
   * The service's own origin: the one of PUBLIC_API_URL, and the one the request was sent to (its
   * scheme, as TRUST_PROXY lets Express read it, and its Host header). A browser sets both Host
   * and Origin itself, so a page elsewhere cannot pass for this one; a page on a host name that
   * merely resolves here would carry no session cookie of the service's.
   */
  private ownOrigins(request: Request): Set<string> {
    const host = request.header('host');
    return new Set([this.publicOrigin, ...(host ? [`${request.protocol}://${host}`] : [])]);
  }

  /** Whether `Authorization` carries an access token that verifies (signature and expiry). */
  private validBearer(request: Request): boolean {
    const match = /^Bearer\s+(\S+)$/i.exec(request.header('authorization') ?? '');
    return match !== null && verifyAccessToken(this.key, match[1]) !== null;
  }
}

/** The request's origin from `Origin`, or else from `Referer`; `null` origins count as foreign. */
function originOf(request: Request): string | undefined {
  const origin = request.header('origin');
  if (origin !== undefined) return origin;
  const referer = request.header('referer');
  if (referer === undefined) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}
