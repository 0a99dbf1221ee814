import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response, NextFunction } from 'express';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

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
 * The precompressed copies the build writes beside each text file (scripts/web-compress.mjs), in
 * the order the service prefers them: brotli is a fifth smaller than gzip on the app's JavaScript.
 */
const ENCODINGS = ['br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number];
const EXTENSION: Record<Encoding, string> = { br: '.br', gzip: '.gz' };

/**
 * The encoding to send among those `available`: the service's preferred one the client takes.
 * Browsers list gzip first with the same weight as br, so the client's order does not decide;
 * its q-values do (`br;q=0` is refused). No Accept-Encoding at all gets the file as it is.
 */
function chooseEncoding(request: Request, available: Encoding[]): Encoding | null {
  if (!request.headers['accept-encoding']) return null;
  return available.find((encoding) => request.acceptsEncodings(encoding) === encoding) ?? null;
}

/** The encodings with a copy of `file` beside it. */
function copiesOf(file: string): Encoding[] {
  return ENCODINGS.filter((encoding) => existsSync(file + EXTENSION[encoding]));
}

/**
 * Sends an asset's precompressed copy when the client takes one, with `Vary: Accept-Encoding` so a
 * cache between keeps each form apart; anything else falls through to the plain static files.
 * What exists is read once: a build replaces the folder and the service with it.
 */
function precompressedAssets(assetsDir: string) {
  const copies = new Map<string, Encoding[]>();
  if (existsSync(assetsDir)) {
    for (const name of readdirSync(assetsDir)) {
      const found = copiesOf(join(assetsDir, name));
      if (found.length > 0) copies.set(name, found);
    }
  }
  return (request: Request, response: Response, next: NextFunction): void => {
    const name = request.path.slice(1);
    const available = copies.get(name);
    if (!available || (request.method !== 'GET' && request.method !== 'HEAD')) {
      next();
      return;
    }
    response.setHeader('Vary', 'Accept-Encoding');
    const encoding = chooseEncoding(request, available);
    if (encoding === null) {
      next();
      return;
    }
    // The type of the file itself, set before sendFile, which would otherwise take the copy's.
    response.type(extname(name));
    response.setHeader('Content-Encoding', encoding);
    response.sendFile(join(assetsDir, name + EXTENSION[encoding]), {
      cacheControl: false,
      headers: { 'Cache-Control': ASSET_CACHE },
    });
  };
}

/**
 * Serves the built web app (`settings.webDir`, made by `npm run build`) on the same origin as the
 * API, outside `/api`: `assets/` with long cache headers, each in its precompressed copy when the
 * client takes one (brotli, else gzip), and `index.html` for every other GET of
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
  const indexCopies = new Map(
    copiesOf(indexFile).map((encoding) => [
      encoding,
      readFileSync(indexFile + EXTENSION[encoding]),
    ]),
  );
  app.use('/assets/', precompressedAssets(join(webDir, 'assets')));
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
    const encoding = chooseEncoding(request, [...indexCopies.keys()]);
    if (indexCopies.size > 0) response.setHeader('Vary', 'Accept-Encoding');
    if (encoding !== null) response.setHeader('Content-Encoding', encoding);
    const body = encoding === null ? index : indexCopies.get(encoding);
    response.status(200).end(request.method === 'HEAD' ? undefined : body);
  });
  new Logger('WebApp').log(`serving the web app from ${webDir}`);
}
