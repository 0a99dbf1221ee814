import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** One request as the service saw and answered it. */
export interface SeenRequest {
  method: string;
  /** The path without the query, e.g. `/api/v1/users/me`. */
  path: string;
  /** The request's `Origin` header. */
  origin: string | undefined;
  /** The cookie names the browser sent. */
  cookies: string[];
  status: number;
  /** The contract error body's `code`, for error answers. */
  code: string | undefined;
}

/**
 * Records every request the service's HTTP server answers, so the test can assert what the server
 * saw even where the browser hides the answer from the page (CORS).
 */
export function recordRequests(server: Server): SeenRequest[] {
  const seen: SeenRequest[] = [];
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    const end = response.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
    response.end = function (this: ServerResponse, ...args: unknown[]) {
      const [chunk] = args;
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) body = chunk.toString();
      return end.apply(this, args);
    } as ServerResponse['end'];
    response.on('finish', () => {
      seen.push({
        method: request.method ?? '',
        path: new URL(request.url ?? '/', 'http://service.invalid').pathname,
        origin: request.headers.origin,
        cookies: cookieNames(request.headers.cookie),
        status: response.statusCode,
        code: response.statusCode >= 400 ? codeOf(body) : undefined,
      });
    });
  });
  return seen;
}

function cookieNames(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header.split(';').map((pair) => pair.split('=')[0].trim());
}

function codeOf(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && 'code' in parsed) {
      return typeof parsed.code === 'string' ? parsed.code : undefined;
    }
  } catch {
    // Not the contract's JSON body.
  }
  return undefined;
}
