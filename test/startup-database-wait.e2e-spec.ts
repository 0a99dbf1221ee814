/**
 * At start, a database that cannot be reached or refuses: the service says why at warn every few
 * seconds, then exits non-zero with the last reason once DB_STARTUP_WAIT_S has passed; a database
 * that comes up within the wait is used.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './harness/processes';
import { createTestDatabase, type TestDatabase } from './harness/database';
import {
  type ServiceProcess,
  spawnService,
  stopService,
  waitHealthy,
} from './harness/service-process';

const WAIT_S = 7;
/** What a stream said, each JSON log line as its message (quotes in it unescaped). */
const said = (text: string): string =>
  text
    .split('\n')
    .map((line) => {
      try {
        return (JSON.parse(line) as { msg?: string }).msg ?? line;
      } catch {
        return line;
      }
    })
    .join('\n');
/** Every line of `text`, each of which must be a JSON log line. */
const jsonLines = (text: string): { level: number; msg: string; context?: string }[] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { level: number; msg: string; context?: string });
/** The messages of the warn lines (pino's level 40) that match `pattern`. */
const warnLines = (service: ServiceProcess, pattern: RegExp) =>
  service
    .stdout()
    .split('\n')
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as { level: number; msg: string };
        return entry.level === 40 && pattern.test(entry.msg) ? [entry.msg] : [];
      } catch {
        return [];
      }
    });

async function timedExit(service: ServiceProcess): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const code = await service.exited();
  return { code, ms: Date.now() - started };
}

describe('start-up while the database is away', () => {
  jest.setTimeout(90_000);
  const services: ServiceProcess[] = [];
  const spawn = async (env: Record<string, string>) => {
    const service = spawnService(await freePort(), { DB_STARTUP_WAIT_S: String(WAIT_S), ...env });
    services.push(service);
    return service;
  };
  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => stopService(service)));
  });

  it('pointed at a closed port: warns with the reason every few seconds, then exits 1 with it', async () => {
    const closed = await freePort();
    const service = await spawn({
      DATABASE_URL: `postgresql://vpn:secret@127.0.0.1:${closed}/vpn`,
    });
    const { code, ms } = await timedExit(service);

    expect(code).toBe(1);
    // Start-up itself (ts-node) comes before the wait; the wait is bounded by the setting.
    expect(ms).toBeGreaterThanOrEqual(WAIT_S * 1000);
    const warned = warnLines(service, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${closed}`));
    // Every 3 s within 7 s: the first try, then two or three more.
    expect(warned.length).toBeGreaterThanOrEqual(3);
    expect(warned[0]).toContain(`postgresql://vpn@127.0.0.1:${closed}/vpn`);
    expect(service.stdout() + service.stderr()).not.toContain('secret');
    expect(said(service.stderr())).toMatch(
      new RegExp(
        `still unreachable after ${WAIT_S} s: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}`,
      ),
    );
    // Never listening meanwhile.
    expect(await fetch(`${service.baseUrl}/api/v1/health`).catch(() => 'refused')).toBe('refused');
  });

  it('in production, a wait that ends in a refusal and a refused setting write only JSON lines', async () => {
    const production = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      PUBLIC_API_URL: 'https://api.example.com',
      APP_URL: 'https://app.example.com',
    };
    const closed = await freePort();
    const waited = await spawn({
      ...production,
      DB_STARTUP_WAIT_S: '4',
      DATABASE_URL: `postgresql://vpn:secret@127.0.0.1:${closed}/vpn`,
    });
    expect(await waited.exited()).toBe(1);
    const waitLines = [...jsonLines(waited.stdout()), ...jsonLines(waited.stderr())];
    expect(waitLines).toContainEqual(
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/ECONNREFUSED/) }),
    );
    expect(waitLines).toContainEqual(
      expect.objectContaining({ level: 60, msg: expect.stringMatching(/still unreachable/) }),
    );

    const refused = await spawn({
      ...production,
      DATABASE_URL: `postgresql://vpn:secret@127.0.0.1:${closed}/vpn`,
      PORT: 'not-a-port',
    });
    expect(await refused.exited()).toBe(1);
    const refusal = [...jsonLines(refused.stdout()), ...jsonLines(refused.stderr())];
    expect(refusal).toEqual([
      expect.objectContaining({
        level: 60,
        problems: [expect.stringMatching(/^PORT: must be a whole number/)],
      }),
    ]);
  });

  it("names PostgreSQL's own refusal (a database that does not exist)", async () => {
    const url = new URL(process.env.TEST_PG_ADMIN_URL as string);
    url.pathname = '/vpn_no_such_database';
    const service = await spawn({ DATABASE_URL: url.toString() });

    expect(await service.exited()).toBe(1);
    expect(
      warnLines(service, /database "vpn_no_such_database" does not exist/).length,
    ).toBeGreaterThanOrEqual(2);
    expect(said(service.stderr())).toContain('database "vpn_no_such_database" does not exist');
  });

  describe('a database that comes up within the wait', () => {
    let database: TestDatabase;
    let proxy: Server | undefined;
    beforeAll(async () => (database = await createTestDatabase()));
    afterAll(async () => {
      proxy?.close();
      await database.drop();
    });

    /** Starts the service at a port where PostgreSQL comes up once the service said it waits. */
    async function startThroughWait(env: Record<string, string>): Promise<ServiceProcess> {
      const target = new URL(database.url);
      const port = await freePort();
      const viaProxy = new URL(database.url);
      viaProxy.host = `127.0.0.1:${port}`;
      const service = await spawn({
        DATABASE_URL: viaProxy.toString(),
        DB_STARTUP_WAIT_S: '60',
        ...env,
      });
      // Once the service has said it cannot connect, PostgreSQL "comes up" on that port.
      const until = Date.now() + 60_000;
      while (warnLines(service, /ECONNREFUSED/).length === 0 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(warnLines(service, /ECONNREFUSED/).length).toBeGreaterThanOrEqual(1);
      proxy = createServer((client) => {
        const server = new Socket();
        server.connect(Number(target.port || 5432), target.hostname);
        client.pipe(server).pipe(client);
        client.on('error', () => server.destroy());
        server.on('error', () => client.destroy());
      }).listen(port, '127.0.0.1');

      await waitHealthy(service, 30_000);
      return service;
    }

    it('is waited for, then served', async () => {
      const service = await startThroughWait({});
      expect(service.child.exitCode).toBeNull();
    });

    it('in production, every line written through the wait, the start and the stop is JSON', async () => {
      // A built web app of its own: the banner names where it is only when there is one.
      const webDir = mkdtempSync(join(tmpdir(), 'web-'));
      writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>app</title>');
      const service = await startThroughWait({
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        PUBLIC_API_URL: 'https://api.example.com',
        APP_URL: 'https://app.example.com',
        WEB_DIR: webDir,
      });
      await stopService(service);
      const lines = [...jsonLines(service.stdout()), ...jsonLines(service.stderr())];
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          context: 'Database',
          msg: expect.stringMatching(/ECONNREFUSED/),
        }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({
          context: 'Database',
          msg: expect.stringMatching(/reachable after/),
        }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: expect.stringMatching(/^listening on/) }),
      );
      // The banner gives the public addresses, where a browser reaches the service.
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: 'web app at https://api.example.com/, staff console at https://api.example.com/staff',
        }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: expect.stringMatching(
            /first owner: .* sign in at https:\/\/api\.example\.com\/staff$/,
          ),
        }),
      );
      rmSync(webDir, { recursive: true });
    });
  });
});
