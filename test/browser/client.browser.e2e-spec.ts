/**
 * The browser client in a real Chromium against the real service: silent refresh, the move to `/`
 * when the session cannot be renewed, and the origin check seen from a foreign page.
 *
 * The test page is served from http://127.0.0.1:<A> (trusted: in CORS_ORIGINS and
 * CSRF_TRUSTED_ORIGINS) and from http://127.0.0.1:<C> (untrusted); the service listens on
 * http://127.0.0.1:<B>. Same host, other ports: same-site, cross-origin, so the SameSite=Lax cookies
 * travel while CORS and the origin check decide. Screenshots go to test-artifacts/browser/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Frame,
  type Page,
} from 'playwright-core';
import { SessionsService } from '../../src/auth/sessions.service';
import { startTestApp, type TestApp } from '../harness/app';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium';
import { buildClient, type PageServer, servePages } from './page-server';
import { recordRequests, type SeenRequest } from './seen-requests';

const ACCESS_TTL_S = 2;
const SHOTS = join(__dirname, '../../test-artifacts/browser');

/** What the page's `window.app` actions resolve to (see page.html). */
type Outcome =
  { ok: true; value?: { userId: string } } | { ok: false; code: string; status: number };
type Action = 'signUp' | 'me' | 'logout';
type PageGlobals = { app: Record<Action, () => Promise<Outcome>>; marker?: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('browser client in Chromium', () => {
  let t: TestApp | undefined;
  let trusted: PageServer | undefined;
  let foreign: PageServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let clientDir: string | undefined;
  let seen: SeenRequest[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    clientDir = mkdtempSync(join(tmpdir(), 'client-build-'));
    buildClient(clientDir);
    let apiBase = '';
    trusted = await servePages({ clientDir, label: 'trusted', apiBase: () => apiBase });
    foreign = await servePages({ clientDir, label: 'untrusted', apiBase: () => apiBase });
    t = await startTestApp({
      CORS_ORIGINS: trusted.origin,
      CSRF_TRUSTED_ORIGINS: trusted.origin,
      COOKIE_SECURE: 'false',
      ACCESS_TOKEN_TTL_S: String(ACCESS_TTL_S),
    });
    apiBase = t.baseUrl;
    seen = recordRequests(t.app.getHttpServer() as Server);

    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: await chromiumExecutable(),
      args: CHROMIUM_ARGS,
    });
    context = await browser.newContext({ viewport: { width: 1000, height: 560 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await trusted?.close();
    await foreign?.close();
    await t?.close();
    if (clientDir) rmSync(clientDir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  const app = (): TestApp => {
    if (!t) throw new Error('the service did not start');
    return t;
  };

  async function open(server: PageServer | undefined, path: string): Promise<void> {
    if (!server) throw new Error('the page server did not start');
    await page.goto(`${server.origin}${path}`);
    await page.waitForFunction(() => 'app' in globalThis);
  }

  /** Runs one of the page's actions and waits for its outcome. */
  const act = (action: Action): Promise<Outcome> =>
    page.evaluate((name) => (globalThis as unknown as PageGlobals).app[name](), action);

  function userIdOf(outcome: Outcome): string {
    if (!outcome.ok || !outcome.value) throw new Error(`call failed: ${JSON.stringify(outcome)}`);
    return outcome.value.userId;
  }

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });
  const pathname = () => new URL(page.url()).pathname;

  /**
   * The API calls the service answered since `from`, as `METHOD /path STATUS [CODE]`. A 304 counts
   * as the 200 the page receives: the service sends an ETag and no Cache-Control, so Chromium keeps
   * the answer of GET /users/me and revalidates it.
   */
  function callsSince(from: number): string[] {
    return seen
      .slice(from)
      .filter((call) => call.path.startsWith('/api/v1/'))
      .map((call) => {
        const status = call.status === 304 ? 200 : call.status;
        const line = `${call.method} ${call.path.slice('/api/v1'.length)} ${status}`;
        return call.code ? `${line} ${call.code}` : line;
      });
  }

  async function expectCalls(from: number, expected: string[]): Promise<void> {
    // The server logs an answer when it is sent; give the last one a moment to be counted.
    for (let turn = 0; turn < 40 && callsSince(from).length < expected.length; turn += 1) {
      await sleep(50);
    }
    expect(callsSince(from)).toEqual(expected);
  }

  async function sessionsOf(userId: string) {
    const [row] = (await app().dataSource.query(
      `SELECT count(*)::int AS total, count(rotated_at)::int AS rotated,
              count(revoked_at)::int AS revoked
         FROM refresh_sessions WHERE user_id = $1`,
      [userId],
    )) as { total: number; rotated: number; revoked: number }[];
    return row;
  }

  let userId = '';
  let signedUpAt = 0;

  it('1. signs up on /account and reads /users/me', async () => {
    await open(trusted, '/account');
    userId = userIdOf(await act('signUp'));
    signedUpAt = Date.now();
    expect(await act('me')).toEqual({ ok: true, value: { userId } });
    expect(await page.textContent('#user')).toBe(userId);
    expect(await sessionsOf(userId)).toEqual({ total: 1, rotated: 0, revoked: 0 });
    await shot('01-signed-up');
  });

  it('2. renews an expired access token with exactly one refresh', async () => {
    // The access cookie lives ACCESS_TOKEN_TTL_S; past it the browser stops sending it.
    await sleep(signedUpAt + (ACCESS_TTL_S + 1) * 1000 - Date.now());
    const mark = seen.length;
    expect(await act('me')).toEqual({ ok: true, value: { userId } });
    await expectCalls(mark, [
      'GET /users/me 401 UNAUTHENTICATED',
      'POST /auth/refresh 200',
      'GET /users/me 200',
    ]);
    expect(await sessionsOf(userId)).toEqual({ total: 2, rotated: 1, revoked: 0 });
    expect(pathname()).toBe('/account');
    expect(await page.textContent('#user')).toBe(userId);
    await shot('02-silent-refresh');
  });

  it('3. sends the page to / when the refresh fails', async () => {
    // No wait for the access token to expire: the service refuses a revoked session's token at once.
    await app().app.get(SessionsService).revokeAll(userId);
    const mark = seen.length;
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/'),
      page.evaluate(() => {
        void (globalThis as unknown as PageGlobals).app.me();
      }),
    ]);
    await expectCalls(mark, [
      'GET /users/me 401 UNAUTHENTICATED',
      'POST /auth/refresh 401 REFRESH_INVALID',
    ]);
    // The failed refresh cleared both cookies.
    expect((await context.cookies()).map((cookie) => cookie.name)).toEqual([]);
    expect(await page.textContent('#path')).toBe('/');
    expect(await page.textContent('#from')).toBe('/account');
    await shot('03-sent-home');
  });

  it('4. on / a failing call stays on / without a reload loop', async () => {
    await page.evaluate(() => {
      (globalThis as unknown as PageGlobals).marker = 'same document';
    });
    let navigations = 0;
    const counted = (frame: Frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    };
    page.on('framenavigated', counted);
    const mark = seen.length;
    expect(await act('me')).toEqual({ ok: false, code: 'UNAUTHENTICATED', status: 401 });
    await sleep(500); // room for a navigation or a second refresh to show up
    page.off('framenavigated', counted);

    expect(navigations).toBe(0);
    expect(pathname()).toBe('/');
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).marker)).toBe(
      'same document',
    );
    await expectCalls(mark, [
      'GET /users/me 401 UNAUTHENTICATED',
      'POST /auth/refresh 401 REFRESH_INVALID',
    ]);
    await shot('04-home-stays');
  });

  it('5. a page on an untrusted origin cannot log the session out', async () => {
    await open(trusted, '/account');
    const victim = userIdOf(await act('signUp'));
    await shot('05-trusted-signed-in');

    await open(foreign, '/account');
    const mark = seen.length;
    // CORS hides both answers from this page, so the client sees no answer at all.
    expect(await act('logout')).toEqual({ ok: false, code: 'NETWORK_ERROR', status: 0 });
    expect(await act('me')).toEqual({ ok: false, code: 'NETWORK_ERROR', status: 0 });
    await shot('06-untrusted-refused');

    // The browser did send the session cookies; the origin check refused the change.
    await expectCalls(mark, ['POST /auth/logout 403 ORIGIN_REJECTED', 'GET /users/me 200']);
    const logout = seen.slice(mark).find((call) => call.path === '/api/v1/auth/logout');
    expect(logout?.origin).toBe(foreign?.origin);
    expect(logout?.cookies).toEqual(expect.arrayContaining(['access_token', 'refresh_token']));
    expect(await sessionsOf(victim)).toEqual({ total: 1, rotated: 0, revoked: 0 });

    await open(trusted, '/account');
    expect(await act('me')).toEqual({ ok: true, value: { userId: victim } });
    await shot('07-session-intact');
  });
});
