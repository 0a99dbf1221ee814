/**
 * The first page on a slow mobile link (Chromium's network emulation at Fast 3G: 1.6 Mbps,
 * 150 ms): something is painted within 2 s, and the JavaScript arrives compressed.
 */
import type { Response } from 'playwright-core';
import { type BrowserApp, startBrowserApp } from './browser-app';

const FAST_3G = {
  offline: false,
  latency: 150,
  downloadThroughput: (1.6 * 1024 * 1024) / 8,
  uploadThroughput: (750 * 1024) / 8,
};

describe('the first page on Fast 3G', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;

  beforeAll(async () => {
    app = await startBrowserApp('first-paint');
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it('paints within 2 s and the JavaScript comes brotli- or gzip-compressed', async () => {
    const page = await app.newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', FAST_3G);
    const scripts: Response[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.endsWith('.js')) scripts.push(response);
    });

    await page.goto(app.url('/plans'), { waitUntil: 'commit' });
    await page.waitForFunction(
      () => performance.getEntriesByName('first-contentful-paint').length > 0,
      undefined,
      { timeout: 10_000 },
    );
    const firstPaintMs = await page.evaluate(
      () => performance.getEntriesByName('first-contentful-paint')[0].startTime,
    );
    await page.getByRole('heading', { name: 'Plans' }).waitFor({ timeout: 30_000 });
    await app.shot(page, 'plans-fast-3g');

    expect(firstPaintMs).toBeLessThan(2_000);
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      const headers = await script.allHeaders();
      expect([script.url(), headers['content-encoding']]).toEqual([
        script.url(),
        expect.stringMatching(/^(br|gzip)$/),
      ]);
    }
    expect(app.takePageErrors()).toEqual([]);
  });
});
