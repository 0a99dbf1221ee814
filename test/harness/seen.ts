import type { Response } from 'supertest';

/** The headers a client acts on that every answer is compared by. */
const HEADERS = ['content-type', 'cache-control', 'x-content-type-options'] as const;

/**
 * What a client can tell of an answer, to compare the answers of two ways to one route (a lane and
 * the general pipeline): its status, the headers it acts on (those above and `headers`), and its
 * body without the request id each answer has its own of (checked to be the one `X-Request-Id`
 * names).
 */
export function seen(response: Response, headers: readonly string[] = []) {
  expect(response.headers['x-request-id']).toEqual(expect.any(String));
  let body: unknown = response.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const { request_id: requestId, ...rest } = body as Record<string, unknown>;
    expect(requestId ?? response.headers['x-request-id']).toBe(response.headers['x-request-id']);
    body = rest;
  }
  return {
    status: response.status,
    headers: Object.fromEntries(
      [...HEADERS, ...headers].map((name) => [name, response.headers[name] as unknown]),
    ),
    body,
  };
}
