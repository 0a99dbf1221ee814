import { connect } from 'node:net';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { freePort } from './harness/metrics';
import {
  spawnService,
  stopService,
  waitHealthy,
  type ServiceProcess,
} from './harness/service-process';

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Sends `head` (and `drip` every 200 ms after it) on a raw socket; the answer once it closes. */
function rawRequest(port: number, head: string, drip?: string): Promise<Raw> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.write(head);
    const timer = drip ? setInterval(() => socket.writable && socket.write(drip), 200) : undefined;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    // Bounded: a server that never closes fails the test instead of hanging it.
    socket.setTimeout(15_000, () => socket.destroy());
    socket.on('close', () => {
      clearInterval(timer);
      const [top, ...rest] = received.split('\r\n\r\n');
      const [statusLine, ...lines] = top.split('\r\n');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(statusLine);
      if (!match) return fail(new Error(`no HTTP answer: ${JSON.stringify(received)}`));
      const headers = Object.fromEntries(
        lines.map((line) => {
          const at = line.indexOf(':');
          return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()];
        }),
      );
      try {
        done({ status: Number(match[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) });
      } catch {
        fail(new Error(`not a JSON body: ${JSON.stringify(received.slice(0, 300))}`));
      }
    });
  });
}

interface AccessLine {
  msg: string;
  req: { id: string; url?: string; remoteAddress?: string };
  res: { statusCode: number };
}

// The service as operators run it (production, JSON log lines on stdout), behind one proxy hop.
describe('every refusal has the one error body with its request id, and its access line', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  let service: ServiceProcess;
  let port: number;
  beforeAll(async () => {
    database = await createTestDatabase();
    port = await freePort();
    service = spawnService(port, {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'false',
      PUBLIC_API_URL: 'https://api.example.test',
      APP_URL: 'https://app.example.test',
      LOG_LEVEL: 'info',
      TRUST_PROXY: '1',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '1500',
    });
    await waitHealthy(service);
  });
  afterAll(async () => {
    if (service) await stopService(service);
    await database?.drop();
  });

  /** The access lines written so far (after a moment for the asynchronous log to flush). */
  async function accessLines(): Promise<AccessLine[]> {
    await new Promise((r) => setTimeout(r, 300));
    return service
      .stdout()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as AccessLine)
      .filter((line) => line.req?.id !== undefined && line.res !== undefined);
  }

  const expectRefusal = (
    answer: { status: number; headers: Record<string, unknown>; body: Record<string, unknown> },
    status: number,
    code: string,
  ) => {
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ statusCode: status, code, message: expect.any(String) });
    expect(answer.headers['x-request-id']).toEqual(expect.any(String));
    expect(answer.body.request_id).toBe(answer.headers['x-request-id']);
  };

  it('a login code in a poll path never reaches the access log', async () => {
    const created = await fetch(`${service.baseUrl}/api/v1/auth/bot/login-codes`, {
      method: 'POST',
    });
    const { code, poll_secret } = (await created.json()) as { code: string; poll_secret: string };
    const poll = await fetch(`${service.baseUrl}/api/v1/auth/bot/login-codes/${code}/poll`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ poll_secret }),
    });
    expect(poll.status).toBe(200);
    const id = poll.headers.get('x-request-id');
    const line = (await accessLines()).find((l) => l.req.id === id);
    expect(line?.req.url).toBe('/api/v1/auth/bot/login-codes/[redacted]/poll');
    expect(service.stdout()).not.toContain(code);
  });

  it('a subscription link’s token never reaches the log', async () => {
    const signup = await fetch(`${service.baseUrl}/api/v1/auth/seed`, { method: 'POST' });
    const { access_token } = (await signup.json()) as { access_token: string };
    const devices = await fetch(`${service.baseUrl}/api/v1/users/me/devices`, {
      headers: { Authorization: `Bearer ${access_token}` },
    });
    const { subscription_url } = (await devices.json()) as { subscription_url: string };
    const path = new URL(subscription_url).pathname;
    const token = path.split('/').pop()!;
    const fetched = await fetch(`${service.baseUrl}${path}`, {
      headers: { 'User-Agent': 'v2rayNG/1.8.5' },
    });
    expect(fetched.status).toBe(200);
    const line = (await accessLines()).find(
      (l) => l.req.id === fetched.headers.get('x-request-id'),
    );
    expect(line?.req.url).toBe('/sub/[redacted]');
    expect(service.stdout()).not.toContain(token);
  });

  it('the access line records the client address the throttles use, not the proxy socket', async () => {
    const answer = await fetch(`${service.baseUrl}/api/v1/health`, {
      headers: { 'X-Forwarded-For': '203.0.113.77' },
    });
    const id = answer.headers.get('x-request-id');
    const line = (await accessLines()).find((l) => l.req.id === id);
    expect(line?.req.remoteAddress).toBe('203.0.113.77');
  });

  it('validation, guard and routing refusals carry the request id', async () => {
    const call = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${service.baseUrl}${path}`, init);
      return {
        status: res.status,
        headers: { 'x-request-id': res.headers.get('x-request-id') },
        body: (await res.json()) as Record<string, unknown>,
      };
    };
    const invalid = await call('/api/v1/auth/seed/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ seed: 42 }),
    });
    expectRefusal(invalid, 400, 'VALIDATION_FAILED');
    expectRefusal(await call('/api/v1/users/me'), 401, 'UNAUTHENTICATED');
    expectRefusal(await call('/api/v1/no/such/route'), 404, 'NOT_FOUND');
  });

  it('a request too slow to arrive is 408 with the error body, its id and its access line', async () => {
    const answer = await rawRequest(
      port,
      'POST /api/v1/auth/seed/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'X-Forwarded-For: 198.51.100.4\r\nContent-Length: 1000\r\n\r\n{',
      ' ',
    );
    expectRefusal(answer, 408, 'REQUEST_TIMEOUT');
    const line = (await accessLines()).find((l) => l.req.id === answer.headers['x-request-id']);
    expect(line).toMatchObject({
      res: { statusCode: 408 },
      req: { remoteAddress: '198.51.100.4' },
    });
  });

  it('headers too large are 431 with the error body, its id and a log line', async () => {
    const answer = await rawRequest(
      port,
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
    );
    expectRefusal(answer, 431, 'HEADERS_TOO_LARGE');
    const line = (await accessLines()).find((l) => l.req.id === answer.headers['x-request-id']);
    expect(line).toMatchObject({ res: { statusCode: 431 } });
    // The service still answers.
    expect((await fetch(`${service.baseUrl}/api/v1/health`)).status).toBe(200);
  });
});
