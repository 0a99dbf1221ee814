import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { EVERY_NODE, InternalCallers } from '../../nodes/internal-callers';
import { AppError } from '../../common/errors';
import { DocumentedGuard } from '../../common/openapi/answers';
import { canonicalUuid } from '../../common/uuid';

export const ANY_NODE = 'internal:any-node';

/** An internal route that a node's secret may call about any node (read-only ones). */
export const AnyNode = (): MethodDecorator => SetMetadata(ANY_NODE, true);

/**
 * The node agents' routes. `X-Internal-Secret` is either INTERNAL_SECRET (the operator's own tools,
 * about any node) or a node's own secret: then the request's `node_id` (body, else query) must be
 * that node (403 FORBIDDEN otherwise), unless the route is marked `@AnyNode()`. A stolen node can
 * neither report traffic for another node nor spend another node's tokens.
 */
@Injectable()
@DocumentedGuard({ schemes: ['internal'], errors: ['INTERNAL_SECRET_INVALID', 'FORBIDDEN'] })
export class InternalSecretGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly callers: InternalCallers,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const nodeId = await this.callers.speaksFor(request.header('x-internal-secret'));
    if (nodeId === null) throw invalid();
    if (nodeId === EVERY_NODE) return true;
    const anyNode = this.reflector.getAllAndOverride<boolean>(ANY_NODE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!anyNode && requestedNode(request) !== nodeId) {
      throw new AppError('FORBIDDEN', "a node's secret speaks only for its own node");
    }
    return true;
  }
}

const invalid = (): AppError =>
  new AppError('INTERNAL_SECRET_INVALID', 'missing or wrong X-Internal-Secret');

/** The canonical `node_id` the request is about (body first, then query), if it names one. */
function requestedNode(request: Request): string | undefined {
  const body: unknown = request.body;
  const query: unknown = request.query;
  for (const source of [body, query]) {
    if (typeof source !== 'object' || source === null) continue;
    const value = (source as Record<string, unknown>).node_id;
    if (typeof value === 'string') return canonicalUuid(value);
  }
  return undefined;
}
