import helmet from 'helmet';
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { RequestWatcher } from './request-watchers';

type Header = [name: string, value: OutgoingHttpHeader];

/**
 * The headers every answer carries: helmet's (without a Content-Security-Policy: the API answers
 * JSON, and the docs set their own) and `Cache-Control: no-store`, since answers are per user
 * (sessions, money) and never cached by browsers or proxies. `X-Frame-Options: DENY`, not helmet's
 * SAMEORIGIN: the web app's and the docs' policies say `frame-ancestors 'none'`, and older
 * browsers that read only this header must be told the same.
 *
 * Helmet's headers depend on its options only, never on the request, so they are read from helmet
 * once at start and set by this one request watcher: helmet itself runs eleven middlewares per
 * request.
 */
export function securityHeaders(): RequestWatcher {
  const headers: Header[] = [
    ...headersOf(helmet({ contentSecurityPolicy: false, frameguard: { action: 'deny' } })),
    ['Cache-Control', 'no-store'],
  ];
  return (_request, response) => {
    for (const [name, value] of headers) response.setHeader(name, value);
  };
}

/** What a middleware that only sets headers sets, run once against a recording response. */
export function headersOf(
  middleware: (
    request: IncomingMessage,
    response: ServerResponse,
    next: (error?: unknown) => void,
  ) => void,
): Header[] {
  const recorded = new Map<string, OutgoingHttpHeader>();
  const response = {
    setHeader(name: string, value: OutgoingHttpHeader) {
      recorded.set(name, value);
      return response;
    },
    removeHeader(name: string) {
      recorded.delete(name);
    },
  };
  let passed = false;
  middleware({ headers: {} } as IncomingMessage, response as unknown as ServerResponse, (error) => {
    if (error) throw error instanceof Error ? error : new Error(String(error));
    passed = true;
  });
  if (!passed) throw new Error('a header middleware did not pass the request on at once');
  return [...recorded];
}
