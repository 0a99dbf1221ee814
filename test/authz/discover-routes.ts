import type { INestApplication } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { API_PREFIX } from '../../src/app.factory';
import { ANY_NODE, InternalSecretGuard } from '../../src/auth/guards/internal-secret.guard';
import { NoBodyGuard } from '../../src/common/no-body.guard';
import {
  AnyStaffGuard,
  NodeManageGuard,
  OwnerGuard,
  PartnerGuard,
  StaffGuard,
  SupportStaffGuard,
} from '../../src/auth/guards/role.guards';
import { handlerRoutes } from '../../src/common/openapi/routes';
import { RateLimitGuard } from '../../src/common/throttling/rate-limit.guard';
import { IS_PUBLIC } from '../../src/common/public.decorator';

/** The metadata key of `@CookieAuthenticated()` (src/auth/guards/origin.guard.ts). */
export const ORIGIN_REQUIRED = 'auth:origin-required';

/**
 * The guard names of the contract. A route may also get a compound name (`a+b`: every part must
 * pass) or `guard:<Class>` for a guard class this file does not know yet; the matrix then expects
 * every simulated caller to be refused, and the table shows the new guard for review.
 */
export type KnownGuardName =
  | 'public'
  | 'user'
  | 'owner'
  | 'staff'
  | 'support_staff'
  | 'node_manage'
  | 'partner'
  | 'any_staff'
  | 'internal'
  | 'internal_any_node'
  | 'refresh_cookie';

const ACCESS_GUARDS = new Map<unknown, KnownGuardName>([
  [OwnerGuard, 'owner'],
  [StaffGuard, 'staff'],
  [SupportStaffGuard, 'support_staff'],
  [NodeManageGuard, 'node_manage'],
  [PartnerGuard, 'partner'],
  [AnyStaffGuard, 'any_staff'],
  [InternalSecretGuard, 'internal'],
]);

export interface DiscoveredRoute {
  /** `METHOD /api/v1/path/{param}`: the route table's key. */
  key: string;
  method: string;
  /** With the global prefix; parameters as `{name}`, as the contract writes them. */
  path: string;
  guard: string;
  /** `Controller.method`, to find it. */
  handler: string;
}

/** The `handler` of routes registered on the HTTP adapter directly (SwaggerModule's pages). */
export const OUTSIDE_NEST = '(outside Nest controllers)';

type GuardRef = (abstract new (...args: never[]) => unknown) | object;

/**
 * Every route the application serves, read from Nest's own module container: each controller of
 * each module, each handler with route metadata, and the guard metadata Nest itself applies.
 */
export function discoverRoutes(app: INestApplication): DiscoveredRoute[] {
  const routes = new Map<string, DiscoveredRoute>();
  for (const found of handlerRoutes(app, API_PREFIX)) {
    const method = found.method.toUpperCase();
    const key = `${method} ${found.path}`;
    const guard = guardName(found.controller, found.handler);
    const route = { key, method, path: found.path, guard, handler: found.name };
    const existing = routes.get(key);
    if (existing && existing.handler !== route.handler) {
      throw new Error(`${key} is served twice: ${existing.handler} and ${route.handler}`);
    }
    routes.set(key, route);
  }
  for (const route of adapterRoutes(app, routes)) routes.set(route.key, route);
  return [...routes.values()].sort((a, b) => compareKeys(a.key, b.key));
}

interface ExpressLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
}

/** A route handler for (nearly) every method is how Nest mounts middleware, not a route. */
const MIDDLEWARE_METHODS = 10;

/**
 * Cross-checks with the HTTP server's own router: every controller route must be registered there,
 * and whatever is registered there besides them (the OpenAPI pages of SwaggerModule) is served
 * without Nest's guards, so it is listed as `public`: a route added to the adapter by hand shows up
 * in the table's diff.
 */
function adapterRoutes(
  app: INestApplication,
  nest: Map<string, DiscoveredRoute>,
): DiscoveredRoute[] {
  const express = app.getHttpAdapter().getInstance() as {
    router?: { stack: ExpressLayer[] };
    _router?: { stack: ExpressLayer[] };
  };
  const stack = (express.router ?? express._router)?.stack;
  if (!stack) throw new Error('cannot read the Express router: teach discover-routes it');

  const served = new Set<string>();
  const extra: DiscoveredRoute[] = [];
  for (const layer of stack) {
    if (!layer.route || typeof layer.route.path !== 'string') continue;
    const methods = Object.keys(layer.route.methods).filter((m) => layer.route?.methods[m]);
    if (methods.length >= MIDDLEWARE_METHODS) continue;
    const path = layer.route.path.replace(/\/:(\w+)(?=\/|$)/g, '/{$1}');
    for (const method of methods.map((m) => m.toUpperCase())) {
      const key = `${method} ${path}`;
      served.add(key);
      if (!nest.has(key)) extra.push({ key, method, path, guard: 'public', handler: OUTSIDE_NEST });
    }
  }
  const unserved = [...nest.keys()].filter((key) => !served.has(key));
  if (unserved.length > 0) {
    throw new Error(`discovered but not in the HTTP router: ${unserved.join(', ')}`);
  }
  return extra;
}

/** Routes sort by path, then method, so a table reads like the contract. */
export function compareKeys(a: string, b: string): number {
  const [ma, pa] = a.split(' ');
  const [mb, pb] = b.split(' ');
  return pa < pb ? -1 : pa > pb ? 1 : ma < mb ? -1 : ma > mb ? 1 : 0;
}

/** The access rule of a route, named as the contract names it. */
function guardName(controller: object, handler: object): string {
  const metadata = <T>(key: string): T | undefined =>
    (Reflect.getMetadata(key, handler) as T | undefined) ??
    (Reflect.getMetadata(key, controller) as T | undefined);
  const isPublic = metadata<boolean>(IS_PUBLIC) === true;
  const originRequired = metadata<boolean>(ORIGIN_REQUIRED) === true;
  // Nest runs the controller's guards, then the handler's.
  const guards = [
    ...((Reflect.getMetadata(GUARDS_METADATA, controller) as GuardRef[] | undefined) ?? []),
    ...((Reflect.getMetadata(GUARDS_METADATA, handler) as GuardRef[] | undefined) ?? []),
  ];
  const names = guards
    .map((guard) => (typeof guard === 'function' ? guard : guard.constructor))
    .filter((guard) => !isThrottler(guard) && guard !== NoBodyGuard)
    .map((guard) => ACCESS_GUARDS.get(guard) ?? `guard:${guard.name}`);

  if (isPublic) {
    if (names.length === 0) return originRequired ? 'refresh_cookie' : 'public';
    if (names.length === 1 && names[0] === 'internal') {
      // A node's secret may call it about any node (read-only), not only its own.
      return metadata<boolean>(ANY_NODE) === true ? 'internal_any_node' : 'internal';
    }
    return ['public', ...names].join('+');
  }
  if (names.length === 0) return 'user';
  // A role guard implies a session; the internal secret does not, so say both.
  return names.includes('internal') ? ['user', ...names].join('+') : names.join('+');
}

/**
 * Rate limiters decide how often, not who: they are not access guards. Nor is `NoBodyGuard`, which
 * checks the request's shape after the route's own guards.
 */
function isThrottler(guard: { prototype?: unknown }): boolean {
  return guard === RateLimitGuard;
}
