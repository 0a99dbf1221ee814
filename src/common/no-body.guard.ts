import {
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  Injectable,
} from '@nestjs/common';
import { GUARDS_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { Request } from 'express';
import { validationFailed } from './errors';
import { DocumentedGuard } from './openapi/answers';
import { handlerRoutes } from './openapi/routes';

/**
 * A body sent to a route that takes none is refused (400), like any unknown field, instead of
 * being ignored. An empty object counts as no body.
 *
 * A guard rather than an interceptor: with no interceptor at all Nest skips its per-request
 * interceptor chain (async resources and observables), about a fifth of the CPU of a small request
 * (bench/RESULTS.md). `guardBodilessRoutes` makes it the last guard of each route that takes no
 * body, so the route's own guards (authentication, the internal secret, roles, throttles) still
 * answer first, as they did for the interceptor.
 */
@Injectable()
@DocumentedGuard({ errors: ['VALIDATION_FAILED'] })
export class NoBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const body = context.switchToHttp().getRequest<Request>().body as unknown;
    const empty =
      body === undefined ||
      (typeof body === 'object' &&
        body !== null &&
        !Array.isArray(body) &&
        Object.keys(body).length === 0);
    if (!empty) throw validationFailed([{ field: 'body', message: 'this route takes no body' }]);
    return true;
  }
}

/**
 * Adds `NoBodyGuard` after the own guards of every route that reads no body (no `@Body()`, no
 * `@Req()`). Call before the routes are built (`app.init()`, or `listen`).
 */
export function guardBodilessRoutes(app: INestApplication, prefix: string): void {
  const guard = new NoBodyGuard();
  for (const { controller, handler, methodName } of handlerRoutes(app, prefix)) {
    if (readsBody(controller, methodName)) continue;
    const guards = (Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? [];
    // A handler served on several paths is listed once per path.
    if (guards.some((existing) => existing instanceof NoBodyGuard)) continue;
    Reflect.defineMetadata(GUARDS_METADATA, [...guards, guard], handler);
  }
}

/** Whether a handler reads the body: a `@Body()` or the whole `@Req()`. */
function readsBody(controller: object, methodName: string): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, methodName) ?? {}) as Record<
    string,
    unknown
  >;
  return Object.keys(args).some((key) => {
    const type = Number(key.split(':')[0]);
    return type === RouteParamtypes.BODY || type === RouteParamtypes.REQUEST;
  });
}
