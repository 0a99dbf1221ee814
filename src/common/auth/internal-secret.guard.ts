import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { NodeSecretLookup } from '../../nodes/node-secret-lookup';
import { AppError } from '../errors';
import { DocumentedGuard } from '../openapi/answers';
import { sha256 } from '../secrets';
import { canonicalUuid } from '../uuid';

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
  private readonly internalDigest: Buffer;

  constructor(
    private readonly reflector: Reflector,
    private readonly nodeSecrets: NodeSecretLookup,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.internalDigest = sha256(settings.internalSecret);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const given = request.header('x-internal-secret');
    if (!given) throw invalid();
    // One hash serves both: compared in constant time with INTERNAL_SECRET's (equal lengths, so
    // neither secret's length leaks), then the key a node's secret is found by.
    const digest = sha256(given);
    if (timingSafeEqual(digest, this.internalDigest)) return true;
    const nodeId = await this.nodeSecrets.nodeOf(digest.toString('hex'));
    if (nodeId === null) throw invalid();
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
