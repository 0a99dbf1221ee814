import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { freePort } from './harness/metrics';
import {
  spawnService,
  stopService,
  waitHealthy,
  type ServiceProcess,
} from './harness/service-process';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOGIN_BODY = JSON.stringify({ username: 'nobody-at-all', password: 'a wrong password' });

/** Sends a request's head and the start of its body now; `finish()` sends the rest and reads the answer. */
function slowRequest(
  port: number,
): Promise<{ finish(): Promise<string>; answer: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /api/v1/auth/admin/login HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(LOGIN_BODY)}\r\n\r\n` +
          LOGIN_BODY.slice(0, 10),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('error', () => undefined);
      const answer = new Promise<string>((done) => socket.once('close', () => done(text)));
      resolve({
        answer,
        finish: () => {
          socket.write(LOGIN_BODY.slice(10));
          return answer;
        },
      });
    });
    socket.once('error', reject);
  });
}

interface Outcome {
  startedAt: number;
  endedAt: number;
  path: string;
  status?: number;
  connection?: string;
  /** The socket error's code when no answer came. */
  error?: string;
}

/** One request without a body; an error (refused, reset) is an outcome too. */
function send(agent: Agent, port: number, method: string, path: string): Promise<Outcome> {
  const startedAt = Date.now();
  return new Promise((resolve) => {
    const req = request({ agent, host: '127.0.0.1', port, method, path }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          startedAt,
          endedAt: Date.now(),
          path,
          status: res.statusCode,
          connection: res.headers.connection,
        }),
      );
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ startedAt, endedAt: Date.now(), path, error: error.code ?? error.message }),
    );
    req.end();
  });
}

/** Polls GET /health on a new connection each time until the first refused connection. */
async function pollHealth(port: number, timeoutMs: number): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: false });
  const outcomes: Outcome[] = [];
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const outcome = await send(agent, port, 'GET', '/api/v1/health');
    outcomes.push(outcome);
    if (outcome.error) break;
    await sleep(50);
  }
  return outcomes;
}

describe('graceful shutdown on SIGTERM', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    if (service) await stopService(service);
    service = undefined;
  });
  afterAll(async () => {
    await database.drop();
  });

  async function start(drainS: number, graceS: number): Promise<number> {
    const port = await freePort();
    service = spawnService(port, {
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'false',
      SHUTDOWN_DRAIN_S: String(drainS),
      SHUTDOWN_GRACE_S: String(graceS),
      RATE_SIGNUP_PER_ADDRESS: '999999/60',
    });
    await waitHealthy(service);
    return port;
  }

  it('idle: serves /health 503 with Connection: close for the drain period, then refuses and exits 0', async () => {
    const port = await start(2, 6);
    const running = service!;
    const signalled = Date.now();
    running.child.kill('SIGTERM');
    const exited = running.exited().then((code) => ({ code, at: Date.now() }));
    const polls = await pollHealth(port, 10_000);

    const refused = polls[polls.length - 1];
    expect(refused.error).toBe('ECONNREFUSED');
    // The listener stayed open for the whole drain period...
    expect(refused.startedAt - signalled).toBeGreaterThanOrEqual(2_000);
    const answered = polls.slice(0, -1);
    expect(answered.length).toBeGreaterThanOrEqual(5);
    // ...answering every poll 503, each on a connection it then closed.
    expect(answered.filter((p) => p.status !== 503 || p.connection !== 'close')).toEqual([]);
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalled).toBeLessThan(6_000);
  });

  it('under load: no request started before the signal or in the drain fails; a slow one is waited for', async () => {
    const port = await start(2, 8);
    const running = service!;
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const outcomes: Outcome[] = [];
    let loading = true;
    const loops = Array.from({ length: 6 }, async (_, i) => {
      const [method, path] =
        i % 2 === 0 ? ['GET', '/api/v1/config'] : ['POST', '/api/v1/auth/seed'];
      while (loading) {
        const outcome = await send(agent, port, method, path);
        outcomes.push(outcome);
        if (outcome.error) await sleep(20);
      }
    });
    await sleep(1_000);
    const inFlight = await slowRequest(port);
    await sleep(200);
    const signalled = Date.now();
    running.child.kill('SIGTERM');
    const exited = running.exited().then((code) => ({ code, at: Date.now() }));
    const polls = pollHealth(port, 10_000);
    await sleep(2_500);
    // Sent after the listener closed: the request in flight is still answered.
    const slow = await inFlight.finish();
    loading = false;
    await Promise.all(loops);
    agent.destroy();

    expect(slow).toMatch(/^HTTP\/1\.1 401 /);
    expect(slow).toContain('"code":"INVALID_CREDENTIALS"');
    expect(slow.toLowerCase()).toContain('connection: close');

    // A new account (a write) or the public configuration.
    const expected = (o: Outcome) => (o.path.endsWith('/config') ? 200 : 201);
    const early = outcomes.filter((o) => o.startedAt < signalled + 1_700);
    expect(early.filter((o) => o.startedAt < signalled).length).toBeGreaterThan(10);
    expect(early.filter((o) => o.startedAt > signalled + 500).length).toBeGreaterThan(5);
    expect(early.filter((o) => o.status !== expected(o))).toEqual([]);
    // Later ones are answered or find the listener closed: refused, or reset when the connection
    // was made as the drain ended and was still in the listener's backlog when it closed (the
    // kernel resets those; a service busy with this load may take some tens of milliseconds to
    // accept a connection). One accepted before the close is served, however late its request.
    const late = outcomes.filter((o) => o.startedAt >= signalled + 1_700);
    expect(
      late.filter(
        (o) =>
          o.status === undefined &&
          o.error !== 'ECONNREFUSED' &&
          !(o.error === 'ECONNRESET' && o.startedAt >= signalled + 1_900),
      ),
    ).toEqual([]);
    expect(late.filter((o) => o.status !== undefined && o.status !== expected(o))).toEqual([]);
    // (From a moment after the signal: it takes the process a few milliseconds to receive it.)
    const answeredInDrain = outcomes.filter((o) => o.startedAt > signalled + 200 && o.status);
    expect(answeredInDrain.length).toBeGreaterThan(5);
    expect(answeredInDrain.every((o) => o.connection === 'close')).toBe(true);

    const health = await polls;
    expect(health[health.length - 1].startedAt - signalled).toBeGreaterThanOrEqual(2_000);
    expect(health.slice(0, -1).every((p) => p.status === 503)).toBe(true);
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalled).toBeLessThan(8_000);
  });

  it('cuts a request that outlasts the grace and still exits within it', async () => {
    const port = await start(1, 4);
    const running = service!;
    const hung = await slowRequest(port);
    const signalled = Date.now();
    running.child.kill('SIGTERM');
    const code = await running.exited();
    const exitedAfter = Date.now() - signalled;
    // Closed unanswered: its client sees the connection end, no answer.
    expect(await hung.answer).toBe('');
    expect(code).toBe(0);
    expect(exitedAfter).toBeGreaterThanOrEqual(1_000);
    // process.exit() is called inside the grace; the margin is the OS reporting the exit.
    expect(exitedAfter).toBeLessThan(4_500);
  });

  it('a second signal stops at once, without waiting out the drain', async () => {
    const port = await start(10, 20);
    const running = service!;
    running.child.kill('SIGTERM');
    await sleep(300);
    expect((await send(new Agent(), port, 'GET', '/api/v1/health')).status).toBe(503);
    const again = Date.now();
    running.child.kill('SIGTERM');
    expect(await running.exited()).toBe(1);
    expect(Date.now() - again).toBeLessThan(2_000);
  });
});
