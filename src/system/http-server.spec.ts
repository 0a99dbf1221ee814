import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type { Express, Request, Response } from 'express';
import type { Settings } from '../config/settings';
import { TimedExpressAdapter } from './http-server';

// V8's own test of two objects' hidden classes; the flag applies to code compiled after it is set.
setFlagsFromString('--allow-natives-syntax');
const sameHiddenClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;

const settings = {
  http: {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 10_000,
    keepAliveTimeoutMs: 5_000,
    maxConnections: 100,
  },
} as Settings;

describe('the HTTP server', () => {
  let server: Server;
  let app: Express;
  const seen: [Request, Response][] = [];

  beforeAll(async () => {
    const adapter = new TimedExpressAdapter(settings);
    adapter.initHttpServer({});
    server = adapter.getHttpServer() as Server;
    app = adapter.getInstance<Express>();
    server.removeAllListeners('request');
    server.on('request', (request: Request, response: Response) => {
      // Fields the front door, the request watchers and the lanes add to every request.
      request.res = response;
      response.req = request;
      response.locals = Object.create(null) as Record<string, unknown>;
      request.originalUrl = request.url;
      request.baseUrl = '';
      (request as { id?: string }).id = 'a request id';
      (request as { route?: unknown }).route = { path: '/' };
      seen.push([request, response]);
      response.end('ok');
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  });

  afterAll(() => new Promise((closed) => server.close(closed)));

  it("makes every request and response with Express's prototypes, all of one hidden class", async () => {
    const { port } = server.address() as AddressInfo;
    for (let i = 0; i < 3; i++) {
      const answer = await fetch(`http://127.0.0.1:${port}/`);
      expect(await answer.text()).toBe('ok');
    }
    const [[firstRequest, firstResponse], ...others] = seen;
    for (const [request, response] of seen) {
      expect(Object.getPrototypeOf(request)).toBe(app.request);
      expect(Object.getPrototypeOf(response)).toBe(app.response);
      expect(request).toBeInstanceOf(IncomingMessage);
      expect(response).toBeInstanceOf(ServerResponse);
      expect(request.get('host')).toBe(`127.0.0.1:${port}`);
    }
    // A prototype set on each object (as Express's `app.handle` does) gives each one that then
    // gains a field a hidden class of its own: kilobytes of garbage a request, and slow reads.
    for (const [request, response] of others) {
      expect(sameHiddenClass(request, firstRequest)).toBe(true);
      expect(sameHiddenClass(response, firstResponse)).toBe(true);
    }
  });
});
