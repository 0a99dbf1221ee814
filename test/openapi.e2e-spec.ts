import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { OPENAPI_FILE, SCHEMA_FILE } from '../scripts/openapi';
import { startTestApp, type TestApp } from './harness/app';

/** The parts of an OpenAPI 3.1 document these checks read. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  nullable?: boolean;
  anyOf?: Schema[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  additionalProperties?: Schema | boolean;
}
interface Answer {
  $ref?: string;
  content?: Record<string, { schema: Schema }>;
  headers?: Record<string, { required?: boolean }>;
}
interface Operation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Answer>;
  security?: Record<string, string[]>[];
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Answer> };
}

/** Every route of the contract's tables (section 2) with its success status. */
const CONTRACT_ROUTES: readonly (readonly [string, string, number])[] = [
  ['GET', '/config', 200],
  ['GET', '/health', 200],
  ['GET', '/plans', 200],
  ['POST', '/auth/seed', 201],
  ['POST', '/auth/seed/login', 200],
  ['POST', '/auth/telegram', 200],
  ['POST', '/auth/bot/login-codes', 201],
  ['POST', '/auth/bot/login-codes/{code}/poll', 200],
  ['POST', '/auth/exchange', 200],
  ['POST', '/auth/refresh', 200],
  ['POST', '/auth/logout', 204],
  ['POST', '/auth/admin/login', 200],
  ['GET', '/users/me', 200],
  ['POST', '/users/me/trial', 200],
  ['GET', '/admin/users', 200],
  ['GET', '/admin/users/{id}', 200],
  ['POST', '/admin/moderators', 201],
  ['POST', '/admin/partners', 201],
  ['POST', '/admin/support', 201],
  ['PATCH', '/admin/users/{id}/node-access', 200],
  ['PATCH', '/admin/users/{id}/traffic-limit', 200],
  ['PATCH', '/admin/settings/traffic-limit', 200],
  ['POST', '/admin/users/{id}/subscription', 200],
  ['POST', '/admin/users/{id}/traffic/reset', 200],
  ['POST', '/admin/users/{id}/block', 200],
  ['POST', '/admin/users/{id}/unblock', 200],
  ['POST', '/admin/users/{id}/password', 204],
  ['GET', '/admin/stats', 200],
  ['PUT', '/admin/plans/{name}', 200],
  ['GET', '/admin/plans', 200],
  ['POST', '/invoices', 201],
  ['GET', '/invoices', 200],
  ['GET', '/invoices/{id}', 200],
  ['POST', '/invoices/{id}/confirm', 200],
  ['GET', '/admin/invoices', 200],
  ['GET', '/admin/payments/unmatched', 200],
  ['POST', '/admin/invoices/{id}/attach-payment', 200],
  ['POST', '/users/me/partner', 200],
  ['GET', '/partners/me/earnings', 200],
  ['GET', '/partners/me/withdrawals', 200],
  ['POST', '/partners/me/withdrawals', 201],
  ['GET', '/admin/withdrawals', 200],
  ['POST', '/admin/withdrawals/{id}/approve', 200],
  ['POST', '/admin/withdrawals/{id}/reject', 200],
  ['POST', '/admin/withdrawals/{id}/paid', 200],
  ['GET', '/admin/nodes', 200],
  ['POST', '/admin/nodes', 201],
  ['GET', '/admin/nodes/{id}', 200],
  ['PATCH', '/admin/nodes/{id}', 200],
  ['DELETE', '/admin/nodes/{id}', 204],
  ['POST', '/admin/nodes/{id}/provision', 202],
  ['POST', '/admin/nodes/{id}/restart', 202],
  ['GET', '/nodes/routing', 200],
  ['POST', '/internal/validate', 200],
  ['POST', '/internal/traffic', 200],
  ['GET', '/internal/limits', 200],
  ['GET', '/internal/credentials', 200],
  ['GET', '/users/me/devices', 200],
  ['POST', '/users/me/devices', 201],
  ['PATCH', '/users/me/devices/{id}', 200],
  ['DELETE', '/users/me/devices/{id}', 204],
  ['POST', '/users/me/subscription-link/rotate', 200],
  ['GET', '/admin/users/{id}/devices', 200],
  ['DELETE', '/admin/users/{id}/devices/{device_id}', 204],
  ['POST', '/tickets', 201],
  ['GET', '/tickets', 200],
  ['GET', '/tickets/{id}', 200],
  ['POST', '/tickets/{id}/messages', 201],
  ['GET', '/admin/tickets', 200],
  ['GET', '/admin/tickets/{id}', 200],
  ['POST', '/admin/tickets/{id}/messages', 201],
  ['POST', '/admin/tickets/{id}/close', 200],
  ['POST', '/game/rounds', 201],
  ['POST', '/game/rounds/{id}/score', 200],
  ['GET', '/game/leaderboard', 200],
  ['POST', '/bot/webhook', 200],
];

/**
 * Documented routes the contract's tables have no row for: section 0 names the audit list; a
 * node's daily traffic is what the console's node chart reads; the second factor's routes.
 */
const BEYOND_THE_TABLES = [
  'GET /admin/audit',
  'GET /admin/nodes/{id}/traffic',
  // Staff sign-in's second factor (issue 43): enrolment, and the owner's reset of another's.
  'GET /auth/totp',
  'POST /auth/totp/setup',
  'POST /auth/totp/enable',
  'POST /auth/totp/disable',
  'POST /admin/users/{id}/totp/reset',
];

/** The contract's features the service does not serve yet: nodes, proxy, bot webhook. */
const NOT_YET = /^\/(?:admin\/nodes|nodes\/|internal\/|bot\/)/;

/** Contract routes the service must serve by now: accounts, users, billing, partners, tickets, game. */
const SERVED_NOW = CONTRACT_ROUTES.filter(([, path]) => !NOT_YET.test(path));

const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

describe('the OpenAPI document and the client types', () => {
  let t: TestApp;
  let served: Document;
  beforeAll(async () => {
    t = await startTestApp();
    const answer = await t.http().get('/api/v1/docs-json').expect(200);
    served = answer.body as Document;
  });
  afterAll(() => t.close());

  const routes = () => {
    const found = new Map<string, Operation>();
    for (const [path, item] of Object.entries(served.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        found.set(key(method, path.replace(/^\/api\/v1/, '')), operation);
      }
    }
    return found;
  };

  /**
   * `schema` with its `$ref` followed, and 3.1's ways of allowing null (`type: [T, 'null']`,
   * `anyOf: [{$ref}, {type: 'null'}]`) read back as `nullable: true` beside a plain `type`.
   */
  const resolve = (schema: Schema): Schema => {
    if (Array.isArray(schema.type)) {
      const types = schema.type.filter((type) => type !== 'null');
      const nullable = types.length < schema.type.length;
      return { ...schema, type: types.length === 1 ? types[0] : types, nullable };
    }
    const branches = schema.anyOf ?? [];
    const orNull = branches.length === 2 && branches.some((branch) => branch.type === 'null');
    if (orNull) {
      const other = branches.find((branch) => branch.type !== 'null') ?? {};
      return { ...resolve(other), nullable: true };
    }
    const ref = schema.$ref ?? (schema.allOf?.length === 1 ? schema.allOf[0].$ref : undefined);
    if (ref === undefined) return schema;
    const name = ref.replace('#/components/schemas/', '');
    const target = served.components.schemas[name];
    if (!target) throw new Error(`${ref} is not in components.schemas`);
    return resolve(target);
  };

  const answerOf = (method: string, path: string, status: number): Schema => {
    const operation = routes().get(key(method, path));
    const schema = operation?.responses[String(status)]?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${key(method, path)} documents no JSON answer at ${status}`);
    return resolve(schema);
  };

  const fieldsOf = (schema: Schema) => Object.keys(schema.properties ?? {}).sort();
  const field = (schema: Schema, name: string) => resolve(schema.properties?.[name] ?? {});

  it('equals the committed client/openapi.json', () => {
    // A difference means the service's routes or shapes changed: `npm run client:types`, then
    // commit client/openapi.json and client/src/schema.d.ts with the change.
    const committed = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as unknown;
    expect(served).toEqual(committed);
  });

  it('client/src/schema.d.ts is openapi-typescript’s output for it', () => {
    // Its CLI in a process of its own: the tool is ES modules, which jest's runtime cannot load.
    const dir = mkdtempSync(join(tmpdir(), 'openapi-types-'));
    const cli = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
    try {
      execFileSync(process.execPath, [cli, OPENAPI_FILE, '-o', join(dir, 'schema.d.ts')], {
        stdio: 'pipe',
      });
      expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(
        readFileSync(join(dir, 'schema.d.ts'), 'utf8'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('documents the contract routes served by now, with their success status', () => {
    const documented = routes();
    const missing = SERVED_NOW.filter(([method, path]) => !documented.has(key(method, path)));
    expect(missing).toEqual([]);
    for (const [method, path, status] of CONTRACT_ROUTES) {
      const operation = documented.get(key(method, path));
      if (operation)
        expect([key(method, path), Object.keys(operation.responses)]).toEqual([
          key(method, path),
          expect.arrayContaining([String(status)]),
        ]);
    }
  });

  it('documents no route beyond the contract', () => {
    const contract = new Set([...CONTRACT_ROUTES.map(([m, p]) => key(m, p)), ...BEYOND_THE_TABLES]);
    expect([...routes().keys()].filter((route) => !contract.has(route))).toEqual([]);
  });

  /** The error codes an operation documents at a status. */
  const codesOf = (method: string, path: string, status: number): unknown[] => {
    const answer = routes().get(key(method, path))?.responses[String(status)];
    const named = answer?.$ref?.replace('#/components/responses/', '');
    const schema = (named ? served.components.responses[named] : answer)?.content?.[
      'application/json'
    ]?.schema;
    return schema?.allOf?.[1]?.properties?.code?.enum ?? [];
  };

  it('is OpenAPI 3.1: null is allowed as validators read it, never by 3.0’s `nullable`', () => {
    expect(served.openapi).toBe('3.1.0');
    expect(JSON.stringify(served)).not.toMatch(/"nullable":/);
  });

  it('says who may call each operation: cookie or Bearer, the refresh cookie, or nobody', () => {
    const security = (method: string, path: string) => routes().get(key(method, path))?.security;
    const signedIn = [{ cookie: [] }, { bearer: [] }];
    expect(security('GET', '/users/me')).toEqual(signedIn);
    expect(security('GET', '/admin/users')).toEqual(signedIn);
    expect(security('POST', '/auth/logout')).toEqual(signedIn);
    expect(security('POST', '/auth/refresh')).toEqual([{ refresh_token: [] }]);
    expect(security('GET', '/config')).toEqual([]);
    expect(security('POST', '/auth/seed')).toEqual([]);
    for (const [route, operation] of routes()) {
      expect([route, Array.isArray(operation.security)]).toEqual([route, true]);
    }
  });

  it('documents each operation’s error answers with the codes of ERROR_STATUS', () => {
    for (const [route, operation] of routes()) {
      expect([route, Object.keys(operation.responses)]).toEqual([
        route,
        expect.arrayContaining(['400', '500']),
      ]);
    }
    expect(codesOf('GET', '/users/me', 401)).toEqual(['UNAUTHENTICATED']);
    // A session of an account blocked as it signed in answers ACCOUNT_BLOCKED on any route.
    expect(codesOf('GET', '/users/me', 403)).toEqual(['ACCOUNT_BLOCKED']);
    const sorted = (codes: unknown[]) => [...codes].sort();
    expect(sorted(codesOf('GET', '/admin/users', 403))).toEqual(['ACCOUNT_BLOCKED', 'FORBIDDEN']);
    expect(sorted(codesOf('POST', '/admin/moderators', 403))).toEqual([
      'ACCOUNT_BLOCKED',
      'FORBIDDEN',
      'ORIGIN_REJECTED',
    ]);
    expect(sorted(codesOf('POST', '/auth/seed/login', 403))).toEqual([
      'ACCOUNT_BLOCKED',
      'ORIGIN_REJECTED',
    ]);
    expect(codesOf('POST', '/invoices/{id}/confirm', 409)).toEqual([
      'INVOICE_NOT_PENDING',
      'PAYMENT_NOT_FOUND',
    ]);
    expect(sorted(codesOf('POST', '/users/me/trial', 403))).toEqual([
      'ACCOUNT_BLOCKED',
      'ORIGIN_REJECTED',
      'TRIAL_TELEGRAM_ONLY',
    ]);
    expect(codesOf('GET', '/users/me', 409)).toEqual([]);
    const throttled = routes().get(key('POST', '/auth/admin/login'))?.responses['429'];
    const limited = served.components.responses[throttled?.$ref?.split('/').pop() ?? ''];
    expect(limited.headers?.['Retry-After']?.required).toBe(true);
    const invalid = served.components.schemas.ValidationErrorBody;
    expect(invalid.allOf?.[1]).toMatchObject({ required: ['details'] });
  });

  it('the user has the contract’s fields, all required', () => {
    const user = answerOf('GET', '/users/me', 200);
    const names = [
      'blocked_at',
      'can_manage_nodes',
      'commission_percent',
      'created_at',
      'id',
      'partner_code',
      'role',
      'subscription',
      'tg_id',
      'traffic',
      'username',
    ];
    expect(fieldsOf(user)).toEqual(names);
    expect([...(user.required ?? [])].sort()).toEqual(names);
    expect(field(user, 'tg_id')).toMatchObject({ type: 'number', nullable: true });
    expect(field(user, 'commission_percent')).toMatchObject({ type: 'number', nullable: true });
    expect(field(user, 'role')).toMatchObject({ nullable: true });
    expect(field(user, 'role').enum).toEqual(['owner', 'moderator', 'partner', 'support', null]);
    const subscription = field(user, 'subscription');
    expect(subscription.nullable).toBe(true);
    expect(fieldsOf(subscription)).toEqual([
      'active',
      'expires_at',
      'plan_name',
      'starts_at',
      'waiting_first_use',
    ]);
    expect(fieldsOf(field(user, 'traffic'))).toEqual(['limit_bytes', 'resets_at', 'used_bytes']);
    expect(field(field(user, 'traffic'), 'limit_bytes').type).toBe('number');
  });

  it('login answers carry the user, and the seed answer the seed once', () => {
    const seed = answerOf('POST', '/auth/seed', 201);
    expect(fieldsOf(seed)).toEqual(['access_token', 'seed', 'user']);
    expect(fieldsOf(answerOf('POST', '/auth/seed/login', 200))).toEqual(['access_token', 'user']);
    for (const path of ['/auth/telegram', '/auth/exchange', '/auth/refresh', '/auth/admin/login']) {
      expect([path, fieldsOf(answerOf('POST', path, 200))]).toEqual([path, ['user']]);
    }
    const code = answerOf('POST', '/auth/bot/login-codes', 201);
    expect(fieldsOf(code)).toEqual(['code', 'deep_link', 'expires_at', 'poll_secret']);
  });

  it('money is a string of digits and plans and invoices have the contract’s fields', () => {
    const plans = answerOf('GET', '/plans', 200);
    expect(plans.type).toBe('array');
    const plan = resolve(plans.items ?? {});
    expect(fieldsOf(plan)).toEqual([
      'device_limit',
      'display',
      'duration_days',
      'name',
      'on_hold_max_days',
      'prices',
      'reset_day',
      'starts',
      'traffic_limit_bytes',
      'traffic_reset',
    ]);
    expect(field(plan, 'traffic_reset').enum).toEqual([
      'none',
      'day',
      'week',
      'month',
      'rolling_month',
    ]);
    expect(field(plan, 'prices').additionalProperties).toMatchObject({ type: 'string' });

    const invoice = answerOf('POST', '/invoices', 201);
    expect(fieldsOf(invoice)).toEqual(
      [
        'amount',
        'created_at',
        'currency',
        'id',
        'paid_at',
        'payment',
        'plan_name',
        'provider',
        'status',
        'user_id',
      ].sort(),
    );
    expect(field(invoice, 'amount').type).toBe('string');
    expect(field(invoice, 'status').enum).toEqual(['pending', 'paid', 'expired']);
    const payments = (field(invoice, 'payment').oneOf ?? []).map(resolve).map(fieldsOf);
    expect(payments).toEqual([['address', 'amount_nano', 'comment', 'link'], ['invoice_link']]);
    expect(fieldsOf(answerOf('POST', '/invoices/{id}/confirm', 200))).toEqual([
      'invoice',
      'subscription',
    ]);
  });

  it('paged lists answer {items, next_cursor} and take limit and cursor', () => {
    for (const path of [
      '/invoices',
      '/tickets',
      '/admin/users',
      '/admin/tickets',
      '/partners/me/withdrawals',
      '/admin/withdrawals',
    ]) {
      const page = answerOf('GET', path, 200);
      expect([path, fieldsOf(page)]).toEqual([path, ['items', 'next_cursor']]);
      const query = (routes().get(key('GET', path))?.parameters ?? [])
        .filter((parameter) => parameter.in === 'query')
        .map((parameter) => parameter.name);
      expect([path, query]).toEqual([path, expect.arrayContaining(['limit', 'cursor'])]);
    }
  });

  it('earnings and withdrawals have the contract’s fields; money is a string', () => {
    const earnings = answerOf('GET', '/partners/me/earnings', 200);
    expect(fieldsOf(earnings)).toEqual(
      expect.arrayContaining(['balances', 'commission_percent', 'partner_code', 'recent']),
    );
    const balance = resolve(field(earnings, 'balances').items ?? {});
    expect(fieldsOf(balance)).toEqual(['available', 'currency', 'earned', 'paid', 'requested']);
    for (const name of ['available', 'earned', 'paid', 'requested']) {
      expect([name, field(balance, name).type]).toEqual([name, 'string']);
    }
    const withdrawal = answerOf('POST', '/partners/me/withdrawals', 201);
    expect(fieldsOf(withdrawal)).toEqual(
      expect.arrayContaining(['amount', 'currency', 'destination', 'id', 'status']),
    );
    expect(field(withdrawal, 'amount').type).toBe('string');
    expect(field(withdrawal, 'status').enum).toEqual(['pending', 'approved', 'rejected', 'paid']);
    for (const move of ['approve', 'reject', 'paid']) {
      expect(fieldsOf(answerOf('POST', `/admin/withdrawals/{id}/${move}`, 200))).toEqual(
        fieldsOf(withdrawal),
      );
    }
  });

  it('tickets, messages and the game have the contract’s fields', () => {
    const thread = answerOf('POST', '/tickets', 201);
    expect(fieldsOf(thread)).toEqual(['messages', 'ticket']);
    expect(fieldsOf(field(thread, 'ticket'))).toEqual(
      expect.arrayContaining(['id', 'status', 'subject']),
    );
    expect(fieldsOf(answerOf('POST', '/tickets/{id}/messages', 201))).toEqual(
      ['author_id', 'author_role', 'body', 'created_at', 'id', 'ticket_id'].sort(),
    );
    expect(fieldsOf(answerOf('POST', '/game/rounds', 201))).toEqual(
      ['board', 'colors', 'expires_at', 'round_id'].sort(),
    );
    expect(fieldsOf(answerOf('POST', '/game/rounds/{id}/score', 200))).toEqual(
      ['cleared', 'remaining', 'score'].sort(),
    );
    const leaderboard = answerOf('GET', '/game/leaderboard', 200);
    expect(leaderboard.type).toBe('array');
    expect(fieldsOf(resolve(leaderboard.items ?? {}))).toEqual(['best_score', 'user_id']);
    expect(fieldsOf(answerOf('GET', '/config', 200))).toEqual([
      'bot_username',
      'demo_payments',
      'grafana_url',
      'payment_methods',
    ]);
  });

  it('every field and query parameter is snake_case', () => {
    const fields = Object.entries(served.components.schemas).flatMap(([name, schema]) =>
      Object.keys(schema.properties ?? {}).map((property) => `${name}.${property}`),
    );
    const queries = [...routes()].flatMap(([route, operation]) =>
      (operation.parameters ?? []).map((parameter) => `${route} ${parameter.in}:${parameter.name}`),
    );
    expect(fields.length).toBeGreaterThan(50);
    // The contract's error body keeps the framework's `statusCode`.
    const named = [...fields, ...queries].filter((name) => name !== 'ErrorBody.statusCode');
    expect(named.filter((name) => !/[.:][a-z][a-z0-9_]*$/.test(name))).toEqual([]);
  });
});
