import { connect, type Socket } from 'node:net';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { freePort } from './harness/metrics';
import {
  spawnService,
  stopService,
  waitHealthy,
  type ServiceProcess,
} from './harness/service-process';

/** Sends a request's head and the start of its body now; `finish()` sends the rest and reads the answer. */
function slowRequest(port: number): Promise<{ finish(): Promise<string>; socket: Socket }> {
  const body = JSON.stringify({ username: 'nobody-at-all', password: 'a wrong password' });
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /api/v1/auth/admin/login HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
          body.slice(0, 10),
      );
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      const ended = new Promise<string>((done) => socket.once('close', () => done(answer)));
      resolve({
        socket,
        finish: () => {
          socket.write(body.slice(10));
          return ended;
        },
      });
    });
    socket.once('error', reject);
  });
}

describe('graceful shutdown on SIGTERM', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  let service: ServiceProcess;
  let port: number;

  beforeAll(async () => {
    database = await createTestDatabase();
    port = await freePort();
    service = spawnService(port, {
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'false',
      SHUTDOWN_GRACE_S: '20',
    });
    await waitHealthy(service);
  });
  afterAll(async () => {
    await stopService(service);
    await database.drop();
  });

  it('turns /health to 503 at once, finishes the request in flight, then exits 0', async () => {
    const inFlight = await slowRequest(port);
    await new Promise((r) => setTimeout(r, 300));
    const signalled = Date.now();
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));

    const health = await fetch(`${service.baseUrl}/api/v1/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'error', db: 'up' });
    expect(service.child.exitCode).toBeNull();

    const answer = await inFlight.finish();
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toContain('"code":"INVALID_CREDENTIALS"');
    expect(answer.toLowerCase()).toContain('connection: close');

    expect(await service.exited()).toBe(0);
    // It left as soon as nothing was in flight, well before the 20 s grace.
    expect(Date.now() - signalled).toBeLessThan(10_000);
  });
});
