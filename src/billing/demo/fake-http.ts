import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake upstream received. */
export interface RecordedRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body, or null. */
  body: unknown;
  /** When it arrived (ms since the epoch). */
  at: number;
}

export interface FakeReply {
  status: number;
  /** Sent as is when a string (to control the exact JSON text), else JSON-encoded. */
  body: unknown;
}

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A small HTTP server on 127.0.0.1:0 answering each request with `handle`, recording every one. */
export async function startFakeServer(
  handle: (request: RecordedRequest) => FakeReply | Promise<FakeReply>,
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        body = text;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
        at: Date.now(),
      };
      requests.push(recorded);
      void Promise.resolve(handle(recorded)).then((reply) => {
        const payload = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.status, { 'Content-Type': 'application/json' });
        res.end(payload);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
