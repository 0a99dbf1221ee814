import type { INestApplication } from '@nestjs/common';
import { GUARDS_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  type ResponseObject,
  type SecurityRequirementObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { JwtAuthGuard } from '../auth/guards/jwt-auth.guard';
import { ORIGIN_REQUIRED, OriginGuard } from '../auth/guards/origin.guard';
import type { ErrorCode } from '../common/errors';
import { IS_PUBLIC } from '../common/public.decorator';
import { UuidPipe } from '../common/validation';
import {
  ANSWERS,
  GUARD_DOC,
  type GuardDoc,
  type SecuritySchemeName,
} from '../common/openapi/answers';
import { ERROR_SCHEMAS, errorResponses } from './error-responses';
import { nullableTo31 } from './nullable';
import { type HandlerRoute, handlerRoutes } from '../common/openapi/routes';

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

/** What every route can answer: hostile input (any body or query) and the unexpected. */
// A database that is away answers 503 UPSTREAM_UNAVAILABLE on any route.
const EVERY_ROUTE: readonly ErrorCode[] = ['VALIDATION_FAILED', 'INTERNAL', 'UPSTREAM_UNAVAILABLE'];
/** What the body parser answers to whatever a mutating call sends. */
const EVERY_BODY: readonly ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
/** `@CookieAuthenticated()` routes (POST /auth/refresh) are signed in by the refresh cookie. */
const REFRESH_COOKIE: GuardDoc = { schemes: ['refresh_token'], errors: [] };

/**
 * The service's OpenAPI 3.1 document: what @nestjs/swagger builds from the controllers and DTOs,
 * with nullable fields in the form validators accept, and each operation's security and error
 * answers derived from its guards (`@DocumentedGuard`), `@Public()`, `@Answers` and ERROR_STATUS.
 */
export function buildOpenApiDocument(app: INestApplication, prefix: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('VPN subscription service')
    .setDescription('Accounts, billing, nodes, partners, tickets, game and the proxy interface.')
    .setVersion('1')
    .addCookieAuth('access_token', { type: 'apiKey', in: 'cookie' }, 'cookie')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .addCookieAuth('refresh_token', { type: 'apiKey', in: 'cookie' }, 'refresh_token')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Internal-Secret' }, 'internal')
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-Telegram-Bot-Api-Secret-Token' },
      'telegram_webhook',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config);
  nullableTo31(document);
  const responses: Record<string, ResponseObject> = {};
  describeAccess(document, handlerRoutes(app, prefix), responses);
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...ERROR_SCHEMAS },
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => (a < b ? -1 : 1))),
  };
  return document;
}

/** Sets each operation's security and error answers from its handler's guards and metadata. */
function describeAccess(
  document: OpenAPIObject,
  routes: HandlerRoute[],
  responses: Record<string, ResponseObject>,
): void {
  const described = new Set<OperationObject>();
  for (const route of routes) {
    const item = document.paths[route.path] as Record<string, OperationObject> | undefined;
    const operation = item?.[route.method];
    if (!operation) continue; // excluded from the document on purpose (@ApiExcludeEndpoint)
    const guards = guardDocs(route);
    operation.security = securityOf(guards);
    markUuidParameters(route, operation);
    const codes = new Set<ErrorCode>([
      ...EVERY_ROUTE,
      ...(MUTATING.has(route.method) ? EVERY_BODY : []),
      ...guards.flatMap((guard) => guard.errors),
      ...metadataList<ErrorCode>(route, ANSWERS),
    ]);
    for (const [status, response] of errorResponses(codes, responses)) {
      const own = operation.responses[status] as { content?: unknown } | undefined;
      // A route's own documented body for a status (the 503 of /health) stays.
      if (own?.content === undefined) operation.responses[status] = response;
    }
    described.add(operation);
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, OperationObject>)) {
      if (!described.has(operation)) {
        throw new Error(`${method.toUpperCase()} ${path} has no controller handler to describe`);
      }
    }
  }
}

/** Path parameters read through UuidPipe are UUIDs (anything else is a 400 before the route). */
function markUuidParameters(route: HandlerRoute, operation: OperationObject): void {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, route.controller, route.methodName) ??
    {}) as Record<string, { data?: unknown; pipes?: unknown[] }>;
  for (const [key, arg] of Object.entries(args)) {
    if (!key.startsWith(`${RouteParamtypes.PARAM}:`) || !arg.pipes?.includes(UuidPipe)) continue;
    for (const parameter of operation.parameters ?? []) {
      if ('in' in parameter && parameter.in === 'path' && parameter.name === arg.data) {
        parameter.schema = { ...parameter.schema, format: 'uuid' };
      }
    }
  }
}

/** The guards that run for a route, global ones first, each with its document description. */
function guardDocs(route: HandlerRoute): GuardDoc[] {
  const isPublic = metadata<boolean>(route, IS_PUBLIC) === true;
  const docs: GuardDoc[] = [];
  if (MUTATING.has(route.method)) docs.push(guardDoc(OriginGuard));
  if (!isPublic) docs.push(guardDoc(JwtAuthGuard));
  if (isPublic && metadata<boolean>(route, ORIGIN_REQUIRED) === true) docs.push(REFRESH_COOKIE);
  const guards = [
    ...((Reflect.getMetadata(GUARDS_METADATA, route.controller) as unknown[] | undefined) ?? []),
    ...((Reflect.getMetadata(GUARDS_METADATA, route.handler) as unknown[] | undefined) ?? []),
  ];
  for (const guard of guards) {
    docs.push(guardDoc(typeof guard === 'function' ? guard : (guard as object).constructor));
  }
  return docs;
}

function guardDoc(guard: object): GuardDoc {
  const doc = Reflect.getMetadata(GUARD_DOC, guard) as GuardDoc | undefined;
  if (!doc) {
    const name = (guard as { name?: string }).name ?? String(guard);
    throw new Error(`guard ${name} has no @DocumentedGuard: say what it checks and answers`);
  }
  return doc;
}

/** Every guard with schemes must pass: one requirement per combination of their alternatives. */
function securityOf(guards: GuardDoc[]): SecurityRequirementObject[] {
  let requirements: SecuritySchemeName[][] = [[]];
  for (const guard of guards) {
    if (!guard.schemes?.length) continue;
    const schemes = guard.schemes;
    requirements = requirements.flatMap((names) => schemes.map((scheme) => [...names, scheme]));
  }
  if (requirements.length === 1 && requirements[0].length === 0) return [];
  return requirements.map((names) => Object.fromEntries(names.map((name) => [name, []])));
}

function metadata<T>(route: HandlerRoute, key: string): T | undefined {
  return (
    (Reflect.getMetadata(key, route.handler) as T | undefined) ??
    (Reflect.getMetadata(key, route.controller) as T | undefined)
  );
}

function metadataList<T>(route: HandlerRoute, key: string): T[] {
  return [
    ...((Reflect.getMetadata(key, route.controller) as T[] | undefined) ?? []),
    ...((Reflect.getMetadata(key, route.handler) as T[] | undefined) ?? []),
  ];
}
