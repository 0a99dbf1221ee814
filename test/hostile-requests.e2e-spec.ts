import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { freePort } from './harness/metrics';
import {
  spawnService,
  stopService,
  waitHealthy,
  type ServiceProcess,
} from './harness/service-process';

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
}

/** One raw HTTP request on a fresh connection, timed from the first byte sent to the last read. */
function send(
  baseUrl: string,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const req = httpRequest(
      `${baseUrl}${path}`,
      {
        method,
        agent: false,
        headers: {
          ...(body === undefined
            ? {}
            : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          done({
            status: res.statusCode!,
            body: Buffer.concat(chunks).toString(),
            headers: res.headers,
            ms: performance.now() - started,
          }),
        );
      },
    );
    // The server may answer and close before it has read a refused body: writing the rest then
    // fails, after the answer arrived.
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET'
        ? setTimeout(() => fail(new Error(`${error.code} before an answer`)), 2_000)
        : fail(error),
    );
    req.end(body);
  });
}

/** `{"seed":"x","k":{"0":1,…}}` with `keys` keys: 80,000 make the probe's 949 KB. */
const wide = (keys: number): string =>
  `{"seed":"x","k":{${Array.from({ length: keys }, (_, i) => `"${i}":1`).join(',')}}}`;

/**
 * CPU time a process and its descendants have used so far (user and system), from /proc, in ms:
 * whatever the service starts counts as its own.
 */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 10 ms.
  const own = (Number(fields[11]) + Number(fields[12])) * 10;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return children === ''
    ? own
    : children.split(' ').reduce((sum, child) => sum + cpuMs(Number(child)), own);
}

// The service runs in a process of its own, as operators run it: what the test process spends
// building and sending bodies does not count against the service's event loop.
describe('one hostile request does not stall the service', () => {
  jest.setTimeout(180_000);
  let database: TestDatabase;
  let service: ServiceProcess;
  let t: { baseUrl: string };
  let bearer: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    service = spawnService(await freePort(), {
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'false',
      LOG_LEVEL: 'info',
    });
    await waitHealthy(service);
    t = service;
    const seed = await send(t.baseUrl, 'POST', '/api/v1/auth/seed');
    bearer = `Bearer ${(JSON.parse(seed.body) as { access_token: string }).access_token}`;
  });
  afterAll(async () => {
    if (service) await stopService(service);
    await database?.drop();
  });

  /** Runs `attack` while polling /health; the answers of both. */
  async function underAttack(attack: () => Promise<Answer[]>) {
    let attacking = true;
    const health: Answer[] = [];
    const poll = (async () => {
      while (attacking) {
        const answer = await send(t.baseUrl, 'GET', '/api/v1/health');
        expect(answer.status).toBe(200);
        health.push(answer);
      }
    })();
    const answers = await attack();
    attacking = false;
    await poll;
    return { answers, health };
  }

  /**
   * The service's own log lines by request id, each with its handling time as the service measured
   * it. On a loaded two-core machine the time a client sees also holds the client's own work.
   */
  async function logLines(): Promise<Map<string, { responseTime: number }[]>> {
    await new Promise((r) => setTimeout(r, 300));
    const lines = new Map<string, { responseTime: number }[]>();
    for (const text of service.stdout().split('\n')) {
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as { req?: { id?: string }; responseTime?: number };
      if (!line.req?.id || line.responseTime === undefined) continue;
      lines.set(line.req.id, [
        ...(lines.get(line.req.id) ?? []),
        { responseTime: line.responseTime },
      ]);
    }
    return lines;
  }

  it('refuses wide bodies, long arrays and compressed bodies in milliseconds while /health answers', async () => {
    const round = await send(t.baseUrl, 'POST', '/api/v1/game/rounds', undefined, {
      Authorization: bearer,
    });
    const game = (JSON.parse(round.body) as { round_id: string }).round_id;
    const clicks = JSON.stringify({ clicks: Array.from({ length: 1000 }, () => [0, 0]) });
    const plain = JSON.stringify({ seed: 'not a real seed' });
    const wideBody = wide(80_000);
    const widerThanBudget = wide(5_000);
    // Warm-up: the first request of a route pays for lazy initialisation, not for its body.
    await send(t.baseUrl, 'POST', '/api/v1/auth/seed/login', plain);

    const { answers, health } = await underAttack(async () => {
      const results: Answer[] = [];
      results.push(await send(t.baseUrl, 'POST', '/api/v1/auth/seed/login', wideBody));
      results.push(
        ...(await Promise.all(
          Array.from({ length: 8 }, () =>
            send(t.baseUrl, 'POST', '/api/v1/auth/seed/login', wideBody),
          ),
        )),
      );
      // Under the byte limit of a signed-in route, over the entry budget.
      results.push(
        await send(t.baseUrl, 'POST', '/api/v1/tickets', widerThanBudget, {
          Authorization: bearer,
        }),
      );
      results.push(
        await send(t.baseUrl, 'POST', `/api/v1/game/rounds/${game}/score`, clicks, {
          Authorization: bearer,
        }),
      );
      for (const encoding of ['gzip', 'deflate', 'br']) {
        results.push(
          await send(t.baseUrl, 'POST', '/api/v1/auth/seed/login', plain, {
            'Content-Encoding': encoding,
          }),
        );
      }
      return results;
    });

    const lines = await logLines();
    expect(health.length).toBeGreaterThan(0);
    for (const answer of [...answers, ...health]) {
      const id = answer.headers['x-request-id'] as string;
      // One log line per request, refused or not, under its X-Request-Id. The bound tells a
      // refusal from an inflated body (seconds of a stalled loop); speed itself is for bench/.
      expect(lines.get(id)).toHaveLength(1);
      expect(lines.get(id)![0].responseTime).toBeLessThan(1_000);
    }
    for (const answer of answers) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(answer.body.length).toBeLessThan(2_000);
      const body = JSON.parse(answer.body) as { code: string; request_id?: string };
      expect(body.request_id).toBe(answer.headers['x-request-id']);
    }
    expect(answers.slice(0, 9).map((a) => a.status)).toEqual(Array(9).fill(413));
    expect(answers[9].status).toBe(400);
    expect(answers[10].status).toBe(400);
    expect(answers.slice(11).map((a) => JSON.parse(a.body).code)).toEqual(
      Array(3).fill('UNSUPPORTED_MEDIA_TYPE'),
    );
    // Reported for the record (jest prints it, not an assertion): the slowest /health as the client saw it.
    console.warn(
      `slowest /health under attack: ${Math.round(Math.max(...health.map((h) => h.ms)))} ms`,
    );
  });

  it('refuses a body over 8 KB at each route anyone may call before signing in, unread', async () => {
    const paths = [
      '/api/v1/auth/seed',
      '/api/v1/auth/seed/login',
      '/api/v1/auth/telegram',
      '/api/v1/auth/exchange',
      '/api/v1/auth/refresh',
      '/api/v1/auth/admin/login',
      '/api/v1/auth/bot/login-codes',
      '/api/v1/auth/bot/login-codes/ABCD1234/poll',
    ];
    const body = JSON.stringify({ seed: 'x'.repeat(8_300) });
    const answers = await Promise.all(paths.map((path) => send(t.baseUrl, 'POST', path, body)));
    expect(answers.map((answer, i) => [paths[i], answer.status])).toEqual(
      paths.map((path) => [path, 413]),
    );
    expect(JSON.parse(answers[1].body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    // The same body is read (and refused for its content) where a signed-in caller sends it.
    const ticket = await send(t.baseUrl, 'POST', '/api/v1/tickets', body, {
      Authorization: bearer,
    });
    expect(ticket.status).toBe(400);
    // A sign-in body of ordinary size is read as before.
    const seedLogin = await send(
      t.baseUrl,
      'POST',
      '/api/v1/auth/seed/login',
      JSON.stringify({ seed: Array(24).fill('abandon').join(' ') }),
    );
    expect(seedLogin.status).toBe(401);
  });

  it('100 wide or 100 deep bodies at once cost less than 100 ordinary ones, and /health answers through them', async () => {
    // 49 KB each: 5,000 unknown keys, or arrays nested 24,500 deep. Before they were counted
    // unparsed, each burst took the service 580-740 ms of CPU and /health's p99 was 1.35-1.43 s
    // (100 ordinary bodies: 300 ms, 675 ms) on the shared two-core machine. At a sign-in route
    // they are over its 8 KB and refused unread (413); at a signed-in route, under BODY_LIMIT,
    // they are read and counted, and refused before anything is built (400). The figure that
    // issue 43 holds to (/health p99 under 50 ms) is measured by `npm run bench:hostile-bodies`,
    // with its client in a process of its own; here the client shares this test's event loop.
    const wideBody = JSON.stringify(
      Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 1])),
    );
    const deepBody = `${'['.repeat(24_500)}${']'.repeat(24_500)}`;
    const signIn = '/api/v1/auth/seed/login';
    const rounds: { kind: string; p99: number; cpu: number; answers: Answer[] }[] = [];
    for (const [kind, path, body, status] of [
      ['ordinary', signIn, '{}', 400],
      ['wide, signing in', signIn, wideBody, 413],
      ['deep, signing in', signIn, deepBody, 413],
      ['wide, signed in', '/api/v1/tickets', wideBody, 400],
      ['deep, signed in', '/api/v1/tickets', deepBody, 400],
    ] as const) {
      if (kind !== 'ordinary') expect(Math.round(Buffer.byteLength(body) / 1000)).toBe(49);
      const headers: Record<string, string> = path === signIn ? {} : { Authorization: bearer };
      // A /health request every 5 ms, each on its own connection, while the bodies arrive.
      const polls: Promise<Answer>[] = [];
      const poller = setInterval(() => polls.push(send(t.baseUrl, 'GET', '/api/v1/health')), 5);
      const cpuBefore = cpuMs(service.child.pid!);
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => send(t.baseUrl, 'POST', path, body, headers)),
      );
      clearInterval(poller);
      const cpu = cpuMs(service.child.pid!) - cpuBefore;
      const health = await Promise.all(polls);
      expect(health.map((answer) => answer.status)).toEqual(health.map(() => 200));
      const times = health.map((answer) => answer.ms).sort((a, b) => a - b);
      const p99 = times[Math.min(times.length - 1, Math.floor(times.length * 0.99))];
      // For the record (jest prints it): the absolute numbers depend on what else the machine runs.
      console.warn(`100 ${kind} bodies: service CPU ${cpu} ms, /health p99 ${p99.toFixed(1)} ms`);
      rounds.push({ kind, p99, cpu, answers });
      if (kind === 'ordinary') continue;
      // Ordinary sign-ins meet the address's throttle; the others are refused before it.
      expect([kind, new Set(answers.map((answer) => answer.status))]).toEqual([
        kind,
        new Set([status]),
      ]);
      expect(JSON.parse(answers[0].body)).toMatchObject({
        code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_FAILED',
        request_id: answers[0].headers['x-request-id'],
        ...(status === 400 ? { details: [{ field: 'body' }] } : {}),
      });
    }
    const [ordinary, ...hostile] = rounds;
    expect(
      hostile.map(({ kind, cpu, p99 }) => ({
        kind,
        cheaper: cpu < ordinary.cpu,
        sooner: p99 < ordinary.p99,
      })),
    ).toEqual(hostile.map(({ kind }) => ({ kind, cheaper: true, sooner: true })));
  });

  it('lists at most 20 problems however many fields are wrong', async () => {
    const body = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, i]));
    const answer = await send(t.baseUrl, 'POST', '/api/v1/tickets', JSON.stringify(body), {
      Authorization: bearer,
    });
    expect(answer.status).toBe(400);
    expect((JSON.parse(answer.body) as { details: unknown[] }).details).toHaveLength(20);
    expect(answer.body.length).toBeLessThan(2_000);
  });

  it.each(['__proto__', 'constructor', 'hasOwnProperty'])(
    'refuses a field named %s',
    async (key) => {
      const answer = await send(
        t.baseUrl,
        'POST',
        '/api/v1/auth/seed/login',
        `{"seed":"x","${key}":{"admin":true}}`,
      );
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: key, message: 'is not an accepted field name' }],
      });
    },
  );

  it('refuses a body sent to a route that takes none', async () => {
    const answer = await send(t.baseUrl, 'POST', '/api/v1/auth/seed', '{"admin":true}');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'body', message: 'this route takes no body' }],
    });
    // Without a body, or with an empty object, the same route works.
    expect((await send(t.baseUrl, 'POST', '/api/v1/auth/seed')).status).toBe(201);
    expect((await send(t.baseUrl, 'POST', '/api/v1/auth/seed', '{}')).status).toBe(201);
  });

  it("a stray body is refused only after the route's own checks", async () => {
    const stray = '{"admin":true}';
    const someone = '00000000-0000-4000-8000-000000000001';
    // The proxy's routes want their secret first.
    const internal = await send(
      t.baseUrl,
      'GET',
      `/api/v1/internal/limits?user_ids=${someone}`,
      stray,
    );
    expect(internal.status).toBe(401);
    expect(JSON.parse(internal.body)).toMatchObject({ code: 'INTERNAL_SECRET_INVALID' });
    // A staff route wants a sign-in, then the role.
    const anonymous = await send(
      t.baseUrl,
      'POST',
      `/api/v1/admin/tickets/${someone}/close`,
      stray,
    );
    expect(anonymous.status).toBe(401);
    const signedUp = await send(t.baseUrl, 'POST', '/api/v1/auth/seed');
    const { access_token: token } = JSON.parse(signedUp.body) as { access_token: string };
    const bearer = { Authorization: `Bearer ${token}` };
    const customer = await send(
      t.baseUrl,
      'POST',
      `/api/v1/admin/tickets/${someone}/close`,
      stray,
      bearer,
    );
    expect(customer.status).toBe(403);
    expect(JSON.parse(customer.body)).toMatchObject({ code: 'FORBIDDEN' });
    // Past them, the body is what is wrong.
    const own = await send(t.baseUrl, 'GET', '/api/v1/users/me', stray, bearer);
    expect(own.status).toBe(400);
    expect(JSON.parse(own.body)).toMatchObject({
      details: [{ field: 'body', message: 'this route takes no body' }],
    });
  });

  it('keeps a safe client request id and replaces any other', async () => {
    const kept = await send(t.baseUrl, 'GET', '/api/v1/health', undefined, {
      'X-Request-Id': 'probe-42.a_b',
    });
    expect(kept.headers['x-request-id']).toBe('probe-42.a_b');
    const replaced = await send(t.baseUrl, 'POST', '/api/v1/auth/seed/login', '{bad', {
      'X-Request-Id': 'x"><script>',
    });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(replaced.body).request_id).toBe(replaced.headers['x-request-id']);
  });
});
