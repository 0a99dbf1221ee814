import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { SessionsService } from '../../src/auth/sessions.service';
import type { User } from '../../src/users/entities/user.entity';
import { startTestApp, TRUSTED_ORIGIN, type TestApp } from '../harness/app';
import { newUser } from '../harness/factories';
import { createNode, nodeSecret } from '../harness/nodes';
import { type DiscoveredRoute, discoverRoutes, OUTSIDE_NEST } from './discover-routes';
import { ROUTE_TABLE } from './route-table';

const CALLERS = [
  'anonymous',
  'seed',
  'telegram',
  'support',
  'partner',
  'moderator',
  'moderator_nodes',
  'owner',
  'internal_secret',
  'node_secret',
] as const;
type Caller = (typeof CALLERS)[number];

const signedIn = (caller: Caller): boolean =>
  caller !== 'anonymous' && caller !== 'internal_secret' && caller !== 'node_secret';

/** Whether one part of a guard name lets `caller` through: the contract's role sets. */
function passes(part: string, caller: Caller): boolean {
  switch (part) {
    case 'public':
      return true;
    case 'user':
    case 'refresh_cookie': // signed-in callers present their refresh cookie
      return signedIn(caller);
    case 'owner':
      return caller === 'owner';
    case 'staff':
      return ['owner', 'moderator', 'moderator_nodes'].includes(caller);
    case 'support_staff':
      return ['owner', 'moderator', 'moderator_nodes', 'support'].includes(caller);
    case 'node_manage':
      return caller === 'owner' || caller === 'moderator_nodes';
    case 'partner':
      return caller === 'partner';
    case 'any_staff':
      return ['owner', 'moderator', 'moderator_nodes', 'support', 'partner'].includes(caller);
    case 'internal':
      // A node's secret passes only for its own node, which a call with `{}` does not name.
      return caller === 'internal_secret';
    case 'internal_any_node':
      return caller === 'internal_secret' || caller === 'node_secret';
    default:
      // `guard:<Class>`: a credential none of these callers holds.
      return false;
  }
}

/** The one rule: a caller is allowed when every part of the route's guard name lets it through. */
function allowed(guard: string, caller: Caller): boolean {
  return guard.split('+').every((part) => passes(part, caller));
}

interface Refusal {
  statuses: number[];
  /** null: any code (a guard this test does not know). */
  code: string | null;
}

/** What a refused caller must get, in the order Nest runs the guards. */
function refusal(guard: string, caller: Caller): Refusal {
  const parts = guard.split('+');
  const sessionRoute = !['public', 'internal', 'internal_any_node', 'refresh_cookie'].includes(
    parts[0],
  );
  if (sessionRoute && !signedIn(caller)) return { statuses: [401], code: 'UNAUTHENTICATED' };
  const failing = parts.find((part) => !passes(part, caller)) ?? parts[0];
  switch (failing) {
    case 'internal':
      return caller === 'node_secret'
        ? { statuses: [403], code: 'FORBIDDEN' }
        : { statuses: [401], code: 'INTERNAL_SECRET_INVALID' };
    case 'internal_any_node':
      return { statuses: [401], code: 'INTERNAL_SECRET_INVALID' };
    case 'refresh_cookie':
      return { statuses: [401], code: 'REFRESH_INVALID' };
    case 'user':
      return { statuses: [401], code: 'UNAUTHENTICATED' };
    case 'owner':
    case 'staff':
    case 'support_staff':
    case 'node_manage':
    case 'partner':
    case 'any_staff':
      return signedIn(caller)
        ? { statuses: [403], code: 'FORBIDDEN' }
        : { statuses: [401], code: 'UNAUTHENTICATED' };
    default:
      return { statuses: [401, 403], code: null };
  }
}

/**
 * An allowed caller must get past every guard: no 401 at all, and no 403 of a guard. A 403 with
 * another code (TRIAL_TELEGRAM_ONLY) is the route's own rule, decided after the guards let it in.
 */
function refusedByGuard(status: number, code: unknown): boolean {
  return status === 401 || (status === 403 && (code === 'FORBIDDEN' || code === 'ORIGIN_REJECTED'));
}

const describeMatrix = process.env.UPDATE_AUTH_TABLE === '1' ? describe.skip : describe;

describeMatrix('authorization matrix: every route as every caller', () => {
  let t: TestApp;
  let routes: DiscoveredRoute[];
  const accounts = new Map<Caller, User>();
  let aNodeSecret: string;

  beforeAll(async () => {
    t = await startTestApp();
    routes = discoverRoutes(t.app);
    const made = await Promise.all([
      newUser(t, 'seed'),
      newUser(t, 'telegram'),
      // The flag on support and partner proves it grants nothing outside owner and moderator.
      newUser(t, 'support', { canManageNodes: true }),
      newUser(t, 'partner', { canManageNodes: true }),
      newUser(t, 'moderator'),
      newUser(t, 'moderator', { canManageNodes: true }),
      newUser(t, 'owner'),
    ]);
    const kinds: Caller[] = [
      'seed',
      'telegram',
      'support',
      'partner',
      'moderator',
      'moderator_nodes',
      'owner',
    ];
    kinds.forEach((kind, i) => accounts.set(kind, made[i].user));
    aNodeSecret = await nodeSecret(t, (await createNode(t, made[6])).id);
  });
  afterAll(() => t.close());

  /** One call with `{}` as body and random UUIDs as path parameters; a fresh session each time. */
  async function call(route: DiscoveredRoute, caller: Caller): Promise<Response> {
    const path = route.path.replace(/\{\w+\}/g, () => randomUUID());
    const agent = t.http();
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    const request = agent[method](path);
    const account = accounts.get(caller);
    if (account) {
      // Fresh per call: a route such as POST /auth/logout ends the session it is called with.
      const session = await t.app.get(SessionsService).start(account);
      if ((ROUTE_TABLE[route.key] ?? route.guard) === 'refresh_cookie') {
        request
          .set('Cookie', `refresh_token=${session.refreshToken}`)
          .set('Origin', TRUSTED_ORIGIN);
      } else {
        request.set('Authorization', `Bearer ${session.accessToken}`);
      }
    }
    if (caller === 'internal_secret') request.set('X-Internal-Secret', t.settings.internalSecret);
    if (caller === 'node_secret') request.set('X-Internal-Secret', aNodeSecret);
    return route.method === 'GET' || route.method === 'HEAD' ? request : request.send({});
  }

  it('each answer matches the route table, and none is a 500', async () => {
    const problems: string[] = [];
    const jobs = routes.flatMap((route) => CALLERS.map((caller) => ({ route, caller })));
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const { route, caller } = jobs[next++];
        // A route missing from the table is still called (as its guards say) so it cannot 500.
        const guard = ROUTE_TABLE[route.key] ?? route.guard;
        if (ROUTE_TABLE[route.key] === undefined && caller === CALLERS[0])
          problems.push(`${route.key}: no entry in route-table.ts (served as '${route.guard}')`);
        const response = await call(route, caller);
        const code = (response.body as { code?: unknown } | undefined)?.code;
        const seen = `${response.status}${typeof code === 'string' ? ` ${code}` : ''}`;
        const where = `${route.key} [${guard}] as ${caller}`;
        if (response.status >= 500 && !(response.status === 503 && code !== 'INTERNAL')) {
          problems.push(`${where}: server error ${seen}`);
        } else if (
          route.handler !== OUTSIDE_NEST &&
          response.status === 404 &&
          /^no route /.test(String(response.body?.message))
        ) {
          problems.push(`${where}: the call did not reach the route (${seen})`);
        } else if (allowed(guard, caller)) {
          if (refusedByGuard(response.status, code))
            problems.push(`${where}: should pass its guards, got ${seen}`);
        } else {
          const expected = refusal(guard, caller);
          const codeOk = expected.code === null || code === expected.code;
          if (!expected.statuses.includes(response.status) || !codeOk)
            problems.push(
              `${where}: should be refused with ${expected.statuses.join('/')} ${expected.code ?? ''}, got ${seen}`,
            );
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(jobs.length).toBe(routes.length * CALLERS.length);
    expect(problems.sort()).toEqual([]);
  }, 120_000);
});
