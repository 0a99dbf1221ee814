/**
 * At start, a database that cannot be reached or refuses: the service says why at warn every few
 * seconds, then exits non-zero with the last reason once DB_STARTUP_WAIT_S has passed; a database
 * that comes up within the wait is used.
 */
import { createServer, type Server, Socket } from 'node:net';
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
const warnLines = (service: ServiceProcess, pattern: RegExp) =>
  service
    .stdout()
    .split('\n')
    .filter((line) => /WARN/.test(line) && pattern.test(line));

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

    it('is waited for, then served', async () => {
      const target = new URL(database.url);
      const port = await freePort();
      const viaProxy = new URL(database.url);
      viaProxy.host = `127.0.0.1:${port}`;
      const service = await spawn({ DATABASE_URL: viaProxy.toString(), DB_STARTUP_WAIT_S: '60' });
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
      expect(service.child.exitCode).toBeNull();
    });
  });
});
