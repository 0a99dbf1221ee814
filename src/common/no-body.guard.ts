import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { Request } from 'express';
import { validationFailed } from './errors';

/** Whether a handler reads the body: a `@Body()` or the whole `@Req()`. */
function readsBody(context: ExecutionContext): boolean {
  const args = (Reflect.getMetadata(
    ROUTE_ARGS_METADATA,
    context.getClass(),
    context.getHandler().name,
  ) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => {
    const type = Number(key.split(':')[0]);
    return type === RouteParamtypes.BODY || type === RouteParamtypes.REQUEST;
  });
}

/**
 * A body sent to a route that takes none is refused (400), like any unknown field, instead of
 * being ignored. An empty object counts as no body.
 *
 * A guard, the last of the global ones (after authentication), rather than an interceptor: with
 * no interceptor at all Nest skips its per-request interceptor chain (async resources and
 * observables), about a fifth of the CPU of a small request (bench/RESULTS.md).
 */
@Injectable()
export class NoBodyGuard implements CanActivate {
  private readonly takesBody = new WeakMap<object, boolean>();

  canActivate(context: ExecutionContext): boolean {
    const body = context.switchToHttp().getRequest<Request>().body as unknown;
    const empty =
      body === undefined ||
      (typeof body === 'object' &&
        body !== null &&
        !Array.isArray(body) &&
        Object.keys(body).length === 0);
    if (empty) return true;
    const handler = context.getHandler();
    let takes = this.takesBody.get(handler);
    if (takes === undefined) {
      takes = readsBody(context);
      this.takesBody.set(handler, takes);
    }
    if (!takes) throw validationFailed([{ field: 'body', message: 'this route takes no body' }]);
    return true;
  }
}
