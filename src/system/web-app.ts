import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response, NextFunction } from 'express';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the app's page may load: its own files, the Telegram login widget (a script from
 * telegram.org that frames oauth.telegram.org), styles set inline by the component library, and
 * the QR code as a data: image. Calls go to its own origin only.
 */
export const WEB_APP_CSP = [
  "default-src 'self'",
  "script-src 'self' https://telegram.org",
  'frame-src https://oauth.telegram.org',
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https://t.me https://telegram.org",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Hashed file names change with their content, so a browser may keep them for a year. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

/**
 * Serves the built web app (`settings.webDir`, made by `npm run build`) on the same origin as the
 * API, outside `/api`: `assets/` with long cache headers, and `index.html` for every other GET of
 * a path without a file extension (the app's routes), never cached so a new build shows at once.
 * Anything else falls through to the API's 404. Without a build the service still runs, API only.
 */
export function serveWebApp(app: NestExpressApplication, webDir: string, apiPrefix: string): void {
  const indexFile = join(webDir, 'index.html');
  if (!existsSync(indexFile)) {
    new Logger('WebApp').warn(
      `the web app is not built (no ${indexFile}): serving the API only; \`npm run build\` builds it`,
    );
    return;
  }
  const index = readFileSync(indexFile);
  app.useStaticAssets(join(webDir, 'assets'), {
    prefix: '/assets/',
    index: false,
    fallthrough: true,
    setHeaders: (response) => response.setHeader('Cache-Control', ASSET_CACHE),
  });
  const api = `/${apiPrefix.split('/')[0]}/`;
  app.use((request: Request, response: Response, next: NextFunction) => {
    const path = request.path;
    const lastSegment = path.slice(path.lastIndexOf('/') + 1);
    if (
      (request.method !== 'GET' && request.method !== 'HEAD') ||
      path.startsWith(api) ||
      path === api.slice(0, -1) ||
      // Subscription links: the API answers them (the page too, for a browser).
      path.startsWith('/sub/') ||
      lastSegment.includes('.')
    ) {
      next();
      return;
    }
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
    response.setHeader('Cache-Control', 'no-cache');
    response.setHeader('Content-Security-Policy', WEB_APP_CSP);
    // The Telegram widget's sign-in window must be able to answer the page that opened it.
    response.setHeader('Cross-Origin-Opener-Policy', 'same-origin-allow-popups');
    response.status(200).end(request.method === 'HEAD' ? undefined : index);
  });
  new Logger('WebApp').log(`serving the web app from ${webDir}`);
}
