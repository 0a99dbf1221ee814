import type { ApplicationConfig } from '@nestjs/core';
import { Client } from 'pg';
import { startTestApp, type TestApp } from './harness/app';

describe('system routes and the error body', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('GET /config reads bot_username from the environment on every request', async () => {
    delete process.env.BOT_USERNAME;
    await t.http().get('/api/v1/config').expect(200, {
      bot_username: null,
      grafana_url: null,
      payment_methods: [],
      demo_payments: false,
    });

    process.env.BOT_USERNAME = 'shop_vpn_bot';
    try {
      await t.http().get('/api/v1/config').expect(200, {
        bot_username: 'shop_vpn_bot',
        grafana_url: null,
        payment_methods: [],
        demo_payments: false,
      });
    } finally {
      delete process.env.BOT_USERNAME;
    }
  });

  it('GET /config gives the GRAFANA_URL the settings validated at start, whatever the environment says later', async () => {
    const grafana = 'https://grafana.example.test/d/vpn';
    const app = await startTestApp({ GRAFANA_URL: grafana }, { databaseUrl: t.databaseUrl });
    process.env.GRAFANA_URL = 'javascript:alert(1)';
    try {
      const config = await app.http().get('/api/v1/config').expect(200);
      expect(config.body.grafana_url).toBe(grafana);
    } finally {
      delete process.env.GRAFANA_URL;
      await app.close();
    }
  });

  it('GET /config names the ways of paying whose settings are present, and only those', async () => {
    const methods = async (env: Record<string, string>) => {
      const app = await startTestApp(env, { databaseUrl: t.databaseUrl });
      try {
        return (await app.http().get('/api/v1/config').expect(200)).body.payment_methods;
      } finally {
        await app.close();
      }
    };
    const wallet = 'UQAs2Xk2Ry3hN8MvD5u4x6ErsV6qLEHbGChlnxa9IJ3Yf4kT';
    // The bot token alone takes Stars; card currencies need the provider token too.
    expect(await methods({ TON_WALLET_ADDRESS: wallet, BOT_TOKEN: '123456:abc' })).toEqual([
      'ton',
      'stars',
    ]);
    expect(
      await methods({
        BOT_TOKEN: '123456:abc',
        TELEGRAM_PAYMENT_PROVIDER_TOKEN: '284685063:TEST:x',
      }),
    ).toEqual(['telegram', 'stars']);
  });

  it('GET /health answers ok while the database is up', async () => {
    await t.http().get('/api/v1/health').expect(200, { status: 'ok', db: 'up' });
  });

  it('malformed JSON is 400 VALIDATION_FAILED with the contract body, never a 500 or HTML', async () => {
    const res = await t
      .http()
      .post('/api/v1/config')
      .set('Content-Type', 'application/json')
      .send('{bad');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
      message: 'request body is not valid JSON',
      details: [{ field: 'body', message: 'request body is not valid JSON' }],
      // The id of its log line, also in X-Request-Id.
      request_id: res.headers['x-request-id'],
    });
  });

  it('an unknown route is 404 NOT_FOUND', async () => {
    const res = await t.http().get('/api/v1/no/such/route').expect(404);
    expect(res.body).toMatchObject({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND' });
    const wrongMethod = await t.http().delete('/api/v1/config').expect(404);
    expect(wrongMethod.body.code).toBe('NOT_FOUND');
  });

  it('an oversized body is 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t
      .http()
      .post('/api/v1/config')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ x: 'a'.repeat(2 * 1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('every response carries a request id; a sane given one is echoed', async () => {
    const res = await t.http().get('/api/v1/health').set('X-Request-Id', 'trace-123');
    expect(res.headers['x-request-id']).toBe('trace-123');
    const generated = await t
      .http()
      .get('/api/v1/health')
      .set('X-Request-Id', 'bad id with spaces');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sets security headers on answers and on errors', async () => {
    for (const res of [
      await t.http().get('/api/v1/health').expect(200),
      await t.http().get('/api/v1/users/me').expect(401),
      await t.http().get('/api/v1/no-such-route').expect(404),
    ]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      // As the pages' `frame-ancestors 'none'` says: nothing frames the service, not even itself.
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+; includeSubDomains$/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.etag).toBeUndefined();
    }
  });

  it('runs requests through no global interceptor and no do-nothing guard', () => {
    // nestjs-cls registers both unmounted; while any global interceptor exists, every request
    // pays for Nest's interceptor chain (dropInertClsEnhancers).
    const config = (t.app as unknown as { config: ApplicationConfig }).config;
    expect(config.getGlobalInterceptors()).toEqual([]);
    const guards = config.getGlobalGuards().map((guard) => guard.constructor.name);
    expect(guards).toEqual(['OriginGuard', 'JwtAuthGuard']);
  });

  it('serves the OpenAPI document and its UI', async () => {
    const doc = await t.http().get('/api/v1/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/config', '/api/v1/health']),
    );
    const ui = await t.http().get('/api/v1/docs').expect(200).expect('Content-Type', /html/);
    expect(ui.headers['content-security-policy']).toMatch(/script-src 'self';/);
  });
});

/** What production refuses to start without besides the database (src/config/settings.ts). */
const PUBLIC_URLS = {
  PUBLIC_API_URL: 'https://api.example.test',
  APP_URL: 'https://app.example.test',
};

describe('API docs in production', () => {
  it('are not served unless DOCS_ENABLED turns them on, and then with a content-security policy', async () => {
    const off = await startTestApp({ NODE_ENV: 'production', ...PUBLIC_URLS });
    try {
      await off.http().get('/api/v1/docs').expect(404);
      await off.http().get('/api/v1/docs-json').expect(404);
    } finally {
      await off.close();
    }
    const on = await startTestApp({ NODE_ENV: 'production', DOCS_ENABLED: 'true', ...PUBLIC_URLS });
    try {
      const ui = await on.http().get('/api/v1/docs').expect(200);
      expect(ui.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      await on.http().get('/api/v1/docs-json').expect(200);
    } finally {
      await on.close();
    }
  });
});

describe('GET /health when the database is gone', () => {
  it('answers 503 {status: "error", db: "down"}', async () => {
    const t = await startTestApp();
    const dbName = new URL(
      t.settings.databaseUrl ?? (t.dataSource.options as { url: string }).url,
    ).pathname.slice(1);
    const admin = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
    await admin.connect();
    try {
      await t.http().get('/api/v1/health').expect(200);
      await admin.query(`DROP DATABASE "${dbName}" WITH (FORCE)`);
      await t.http().get('/api/v1/health').expect(503, { status: 'error', db: 'down' });
    } finally {
      await admin.end();
      await t.close();
    }
  });
});
