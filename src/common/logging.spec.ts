import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { createServer, get, type Server } from 'node:http';
import { Writable } from 'node:stream';
import express from 'express';
import pinoHttp, { type Options } from 'pino-http';
import { loadSettings } from '../config/settings';
import { loggerOptions, prettyTransport, quietWiring } from './logging';
import { requestLog } from './request-id';
import { watchRequests } from './request-watchers';

const SECRETS = {
  JWT_ACCESS_SECRET: 'logging-spec-jwt-access-secret-0123456789',
  INTERNAL_SECRET: 'logging-spec-internal-secret-0123456789ab',
  PROXY_TOKEN_SECRET: 'logging-spec-proxy-token-secret-01234567',
  DATA_ENCRYPTION_KEY: 'logging-spec-data-encryption-key-0123456',
  SEED_PEPPER: 'logging-spec-seed-pepper-0123456789abcdefg',
};

/** A production service's settings, logging at `info`. */
const ENVIRONMENT = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'info',
  DATABASE_URL: 'postgresql://logging@db.example.test/logging',
  PUBLIC_API_URL: 'https://api.example.test',
  APP_URL: 'https://app.example.test',
  ...SECRETS,
};

/** Tells the test that a request to `/hang` reached the server. */
const hanging = new EventEmitter();

/** Tells the test that the log sink received a line. */
const logged = new EventEmitter();

/** Resolves once `lines` holds `count` lines. */
async function linesReach(lines: unknown[], count: number): Promise<void> {
  while (lines.length < count) await new Promise((done) => logged.once('line', done));
}

/** The service's logger and request-log middleware on a bare Express app, its lines into `lines`. */
function serverLogging(lines: Record<string, unknown>[]): Server {
  const settings = loadSettings(ENVIRONMENT);
  const configured = loggerOptions(settings).pinoHttp;
  const options = (Array.isArray(configured) ? configured[0] : configured) as Options;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
        logged.emit('line');
      }
      done();
    },
  });
  // Built as nestjs-pino builds the service's root logger: by pino-http, from these options.
  const { logger } = pinoHttp({ ...options, transport: undefined }, sink);
  const app = express();
  app.use(watchRequests([requestLog(() => logger)]));
  app.use((req, res) => {
    res.statusCode = req.url.startsWith('/missing')
      ? 404
      : req.url.startsWith('/broken')
        ? 500
        : 200;
    res.setHeader('Set-Cookie', 'access_token=response-secret');
    // Never answered: the client gives up.
    if (req.url.startsWith('/hang')) return void hanging.emit('arrived');
    res.end('{}');
  });
  return createServer(app);
}

describe('request log line', () => {
  let server: Server;
  let base: string;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    server = serverLogging(lines);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((done) => server.close(done));
  });

  it('one line per request with its request id, method, path, status and time; no headers, no secrets', async () => {
    const ok = await fetch(`${base}/api/v1/users/me?token=query-secret`, {
      headers: { cookie: 'access_token=cookie-secret', authorization: 'Bearer bearer-secret' },
    });
    const missing = await fetch(`${base}/missing`, { headers: { 'x-request-id': 'trace-7' } });
    await linesReach(lines, 2);

    expect(lines).toHaveLength(2);
    const [first, second] = lines;
    expect(first).toMatchObject({
      level: 30,
      req: {
        id: ok.headers.get('x-request-id'),
        method: 'GET',
        url: '/api/v1/users/me',
        remoteAddress: '127.0.0.1',
      },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect(typeof first.responseTime).toBe('number');
    expect(second).toMatchObject({ level: 40, req: { id: 'trace-7' }, res: { statusCode: 404 } });
    expect(missing.headers.get('x-request-id')).toBe('trace-7');
    const text = JSON.stringify(lines);
    for (const secret of ['query-secret', 'cookie-secret', 'bearer-secret', 'response-secret']) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain('headers');
  });

  it('a 5xx is logged at error; a request the client gave up on at warn, once', async () => {
    lines.length = 0;
    await fetch(`${base}/broken`);
    const arrived = new Promise((done) => hanging.once('arrived', done));
    const request = get(`${base}/hang`).on('error', () => undefined);
    await arrived;
    request.destroy();
    await linesReach(lines, 2);
    expect(lines.map(({ level, msg, req, res }) => ({ level, msg, req, res }))).toEqual([
      {
        level: 50,
        msg: 'request completed',
        req: expect.objectContaining({ url: '/broken', remoteAddress: '127.0.0.1' }),
        res: { statusCode: 500 },
      },
      {
        level: 40,
        msg: 'request aborted',
        req: expect.objectContaining({ url: '/hang', remoteAddress: '127.0.0.1' }),
        res: { statusCode: 200 },
      },
    ]);
  });
});

describe('log format', () => {
  const wasTerminal = process.stdout.isTTY;
  afterEach(() => (process.stdout.isTTY = wasTerminal));

  it('is pretty only for a person at a terminal in development: tests and production log JSON on a terminal too', () => {
    process.stdout.isTTY = true;
    expect(prettyTransport({ nodeEnv: 'development' })?.target).toBe('pino-pretty');
    expect(prettyTransport({ nodeEnv: 'test' })).toBeUndefined();
    expect(prettyTransport({ nodeEnv: 'production' })).toBeUndefined();
    process.stdout.isTTY = false;
    expect(prettyTransport({ nodeEnv: 'development' })).toBeUndefined();
  });

  it("puts Nest's lines per module and per route at debug, and keeps its other lines", () => {
    const seen: [string, unknown, unknown][] = [];
    const logger = quietWiring({
      log: (message, context) => seen.push(['log', message, context]),
      debug: (message, context) => seen.push(['debug', message, context]),
      error: (message, context) => seen.push(['error', message, context]),
      warn: (message, context) => seen.push(['warn', message, context]),
    });
    logger.log('Mapped {/api/v1/health, GET} route', 'RouterExplorer');
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.log('Nest application successfully started', 'NestApplication');
    logger.warn('slow', 'Jobs');
    expect(seen).toEqual([
      ['debug', 'Mapped {/api/v1/health, GET} route', 'RouterExplorer'],
      ['debug', 'AppModule dependencies initialized', 'InstanceLoader'],
      ['log', 'Nest application successfully started', 'NestApplication'],
      ['warn', 'slow', 'Jobs'],
    ]);
  });
});

describe('standard output', () => {
  /**
   * A process logging through the service's destination (`loggerOptions`): one line, then, once
   * told on stdin, 500 lines and `process.exit` at once.
   */
  const script = `
    const pino = require('pino');
    const { loggerOptions } = require('./src/common/logging');
    const { loadSettings } = require('./src/config/settings');
    const settings = loadSettings(${JSON.stringify(ENVIRONMENT)});
    const [options, destination] = loggerOptions(settings).pinoHttp;
    const logger = pino({ ...options, transport: undefined }, destination);
    logger.info('alone');
    process.stdin.once('data', () => {
      for (let n = 0; n < 500; n++) logger.info({ n }, 'burst');
      process.exit(0);
    });`;

  it("a quiet service's line is written within a moment; every line logged before an exit is kept", async () => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: `${__dirname}/../..`,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // 'close', not 'exit': the output is then read to its end.
    const exited = once(child, 'close');
    try {
      // Far less than 4 KB: written by the periodic flush, while the process still runs.
      const deadline = Date.now() + 15_000;
      while (!output.includes('"msg":"alone"') && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 20));
      }
      expect(output).toContain('"msg":"alone"');
      expect(child.exitCode).toBeNull();
      child.stdin.end('go\n');
      expect(await exited).toEqual([0, null]);
      const burst = output
        .split('\n')
        .filter((line) => line.includes('"msg":"burst"'))
        .map((line) => (JSON.parse(line) as { n: number }).n);
      expect(burst).toEqual(Array.from({ length: 500 }, (_, n) => n));
    } finally {
      child.kill();
    }
  }, 30_000);
});
