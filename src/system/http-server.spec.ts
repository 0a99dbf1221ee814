import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type { Express, Request, Response } from 'express';
import type { Settings } from '../config/settings';
import { frontDoor } from './front-door';
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
    // The front door as the application mounts it, with a watcher and a lane adding the fields
    // they add to every request.
    server.removeAllListeners('request');
    server.on(
      'request',
      frontDoor(
        app,
        (request, _response, next) => {
          (request as { id?: string }).id = 'a request id';
          next();
        },
        [
          (request, response) => {
            (request as { route?: unknown }).route = { path: '/' };
            seen.push([request, response]);
            response.end('ok');
          },
        ],
      ),
    );
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  });

  afterAll(() => new Promise((closed) => server.close(closed)));

  it("makes every request and response with Express's prototypes, all of one hidden class", async () => {
    const { port } = server.address() as AddressInfo;
    // V8 settles a constructor's objects' size after its first several (slack tracking), and a
    // collection may settle it at any time before: the shapes compared are of later requests.
    for (let i = 0; i < 12; i++) {
      const answer = await fetch(`http://127.0.0.1:${port}/`);
      expect(await answer.text()).toBe('ok');
    }
    const [[firstRequest, firstResponse], ...others] = seen.slice(9);
    for (const [request, response] of seen) {
      expect(Object.getPrototypeOf(request)).toBe(app.request);
      expect(Object.getPrototypeOf(response)).toBe(app.response);
      expect(request).toBeInstanceOf(IncomingMessage);
      expect(response).toBeInstanceOf(ServerResponse);
      expect(request.get('host')).toBe(`127.0.0.1:${port}`);
    }
    // A prototype set on each object (as Express's `app.handle` does, and the front door did)
    // gives each one that then gains a field a hidden class of its own: kilobytes of garbage a
    // request, and slow reads.
    for (const [request, response] of others) {
      expect(sameHiddenClass(request, firstRequest)).toBe(true);
      expect(sameHiddenClass(response, firstResponse)).toBe(true);
    }
  });
});
