import { connect, type Socket } from 'node:net';
import { startTestApp, type TestApp } from './harness/app';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
/** Node checks the timeouts once a second; a little more for a loaded machine. */
const SLACK_MS = 2_500;

interface Slow {
  socket: Socket;
  /** Milliseconds from the connection to its close by the server; null while open. */
  closedAfter: number | null;
  received: string;
}

/** A socket that sends `start`, then `drip` every `everyMs`, until the server closes it. */
function slowClient(port: number, start: string, drip: string, everyMs: number): Slow {
  const socket = connect(port, '127.0.0.1');
  const slow: Slow = { socket, closedAfter: null, received: '' };
  const opened = performance.now();
  socket.write(start);
  const timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
  socket.on('data', (chunk: Buffer) => (slow.received += chunk.toString()));
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(timer);
    slow.closedAfter = performance.now() - opened;
  });
  return slow;
}

describe('slow clients do not hold connections', () => {
  jest.setTimeout(30_000);
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_MAX_CONNECTIONS: '40',
    });
    port = Number(new URL(t.baseUrl).port);
  });
  afterAll(() => t.close());

  const waitClosed = async (clients: Slow[], withinMs: number) => {
    const started = performance.now();
    while (clients.some((c) => c.closedAfter === null) && performance.now() - started < withinMs) {
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('closes sockets that send a header line now and then, and those that drip a body', async () => {
    const headers = Array.from({ length: 15 }, () =>
      slowClient(port, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n', 300),
    );
    const bodies = Array.from({ length: 15 }, () =>
      slowClient(
        port,
        'POST /api/v1/auth/seed/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'Content-Length: 1000\r\n\r\n{',
        ' ',
        300,
      ),
    );
    await waitClosed([...headers, ...bodies], REQUEST_TIMEOUT_MS + SLACK_MS + 1_000);
    for (const c of headers) {
      expect(c.closedAfter).not.toBeNull();
      expect(c.closedAfter!).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
    }
    for (const c of bodies) {
      expect(c.closedAfter).not.toBeNull();
      expect(c.closedAfter!).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
      expect(c.received).toMatch(/^HTTP\/1\.1 408/);
    }
    // The service still answers.
    await t.http().get('/api/v1/health').expect(200);
  });

  it('closes connections over the cap at once', async () => {
    const idle = Array.from({ length: 60 }, () => slowClient(port, '', '', 60_000));
    await new Promise((r) => setTimeout(r, 500));
    const closed = idle.filter((c) => c.closedAfter !== null);
    expect(closed.length).toBeGreaterThanOrEqual(20);
    for (const c of idle) c.socket.destroy();
  });
});
