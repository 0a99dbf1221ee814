import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';

/** A script large and repetitive enough that its compressed copies are far smaller. */
const BIG_SCRIPT = Array.from(
  { length: 2000 },
  (_, i) => `export function part${i}(value) { return value + ${i}; }\n`,
).join('');

/** A GET with exactly this Accept-Encoding (none when empty), its body as sent: not decoded. */
function rawGet(
  url: string,
  acceptEncoding: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((done, fail) => {
    const headers = acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {};
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    }).on('error', fail);
  });
}

/** The service serving a built web app outside /api (a stand-in build here; the browser test builds the real one). */
describe('the web app served by the service', () => {
  let t: TestApp;
  let webDir: string;

  beforeAll(async () => {
    webDir = mkdtempSync(join(tmpdir(), 'web-app-'));
    mkdirSync(join(webDir, 'assets'));
    writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>app</title>');
    writeFileSync(join(webDir, 'assets', 'index-AbC123.js'), 'console.log(1)');
    writeFileSync(join(webDir, 'assets', 'app-Big456.js'), BIG_SCRIPT);
    // The build's own step writes the compressed copies (too small a file gets none).
    execFileSync(process.execPath, [join(__dirname, '../scripts/web-compress.mjs'), webDir]);
    t = await startTestApp({ WEB_DIR: webDir, PORT: '0' });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(webDir, { recursive: true, force: true });
  });

  it('answers every app route with index.html, never cached, under the content-security policy', async () => {
    for (const path of ['/', '/account', '/plans?bootstrap=abc', '/support/123', '/staff/users']) {
      const res = await t.http().get(path).expect(200);
      expect([path, res.headers['content-type'], res.text]).toEqual([
        path,
        'text/html; charset=utf-8',
        '<!doctype html><title>app</title>',
      ]);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toMatch(
        /^default-src 'self'; script-src 'self' https:\/\/telegram.org;/,
      );
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
    const head = await t.http().head('/account').expect(200);
    expect(head.text).toBeUndefined();
  });

  it('serves hashed assets for a year and leaves the rest to the API’s error answers', async () => {
    const asset = await t.http().get('/assets/index-AbC123.js').expect(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toContain('javascript');
    for (const [method, path] of [
      ['get', '/assets/missing.js'],
      ['get', '/favicon.ico'],
      ['post', '/account'],
      ['get', '/api/v1/unknown'],
      ['get', '/api'],
    ] as const) {
      const res = await t.http()[method](path);
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'NOT_FOUND']);
    }
  });

  it('sends the JavaScript brotli- or gzip-compressed by Accept-Encoding, the same script', async () => {
    const path = '/assets/app-Big456.js';
    const cases = [
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip, deflate', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['', undefined],
      ['identity', undefined],
    ] as const;
    for (const [accept, encoding] of cases) {
      const res = await rawGet(t.baseUrl + path, accept);
      expect([accept, res.status, res.headers['content-encoding']]).toEqual([
        accept,
        200,
        encoding,
      ]);
      expect(res.headers['content-type']).toMatch(/javascript/);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers.vary).toMatch(/Accept-Encoding/);
      const body =
        encoding === 'br'
          ? brotliDecompressSync(res.body)
          : encoding === 'gzip'
            ? gunzipSync(res.body)
            : res.body;
      expect(body.toString()).toBe(BIG_SCRIPT);
      if (encoding) expect(res.body.length).toBeLessThan(BIG_SCRIPT.length / 4);
    }
    // The file too small to gain from compression is sent as it is.
    const small = await rawGet(`${t.baseUrl}/assets/index-AbC123.js`, 'gzip, br');
    expect([small.headers['content-encoding'], small.body.toString()]).toEqual([
      undefined,
      'console.log(1)',
    ]);
  });

  it('the API prefix is matched case-sensitively: /API/v1 is not the API, for any method', async () => {
    const page = await t.http().get('/API/v1/health').expect(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const [method, path] of [
      ['post', '/API/v1/auth/logout'],
      ['post', '/Api/v1/tickets'],
      ['put', '/API/v1/admin/plans/monthly'],
      ['get', '/api/V1/health'],
    ] as const) {
      const res = await t.http()[method](path).send({});
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'NOT_FOUND']);
    }
    const health = await t.http().get('/api/v1/health').expect(200);
    expect(health.headers['content-type']).toMatch(/^application\/json/);
  });

  it('is never framed: X-Frame-Options agrees with frame-ancestors', async () => {
    for (const path of ['/account', '/api/v1/health']) {
      const res = await t.http().get(path).expect(200);
      expect([path, res.headers['x-frame-options']]).toEqual([path, 'DENY']);
    }
  });

  it('keeps the API as it was: JSON, no-store, and the origin check for other origins', async () => {
    const user = await newUser(t, 'seed');
    const me = await t.http().get('/api/v1/users/me').set(user.bearer).expect(200);
    expect(me.headers['cache-control']).toBe('no-store');
    expect(me.headers['content-security-policy']).toBeUndefined();
    const foreign = await t
      .http()
      .post('/api/v1/auth/logout')
      .set({ Cookie: user.cookie, Origin: 'https://elsewhere.example' });
    expect([foreign.status, foreign.body.code]).toEqual([403, 'ORIGIN_REJECTED']);
  });

  it('starts without a built app, answering the API only', async () => {
    const bare = await startTestApp(
      { WEB_DIR: join(webDir, 'not-built') },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const res = await bare.http().get('/account');
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
      await bare.http().get('/api/v1/health').expect(200);
    } finally {
      await bare.close();
    }
  });
});
