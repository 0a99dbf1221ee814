import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings, SettingsError, settingsWarnings } from './settings';

const SECRETS = {
  JWT_ACCESS_SECRET: 'a'.repeat(40),
  INTERNAL_SECRET: 'b'.repeat(40),
  PROXY_TOKEN_SECRET: 'c'.repeat(40),
  DATA_ENCRYPTION_KEY: 'd'.repeat(40),
  SEED_PEPPER: 'e'.repeat(40),
};

/** What production needs besides the secrets: a database and public addresses. */
const PRODUCTION = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgresql://app@db.internal:5432/app',
  PUBLIC_API_URL: 'https://api.example.com',
  APP_URL: 'https://app.example.com',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadSettings(env);
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadSettings', () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), 'settings-'));

  it('applies the contract defaults', () => {
    const s = loadSettings({ ...SECRETS, DATA_DIR: dataDir() });
    expect(s).toMatchObject({
      host: '0.0.0.0',
      port: 3000,
      databaseUrl: null,
      migrationsRun: true,
      accessTokenTtlS: 900,
      refreshTokenTtlS: 2_592_000,
      // Outside production: browsers keep no Secure cookie over plain HTTP (issue 42).
      cookieSecure: false,
      cookieDomain: null,
      corsOrigins: [],
      appUrl: 'http://localhost:3000',
      publicApiUrl: 'http://localhost:3000',
      botMode: 'off',
      telegramAuthMaxAgeS: 86_400,
      trialDays: 3,
      referralRewardDays: 7,
      trafficLimitDefaultBytes: 107_374_182_400n,
      nodeHealthIntervalS: 60,
      reconcileIntervalS: 60,
      rateCacheS: 60,
      telegramApiRoot: 'https://api.telegram.org',
      tonApiUrl: 'https://toncenter.com',
      tonRatesUrl: 'https://tonapi.io',
      heapGrowingPercent: 100,
    });
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('links the bot to the app the service serves, at its own address by default', () => {
    const local = loadSettings({ ...SECRETS, DATA_DIR: dataDir(), PORT: '4100' });
    expect(local.publicApiUrl).toBe('http://localhost:4100');
    expect(local.appUrl).toBe('http://localhost:4100');
    expect(local.webDir).toBe(join(__dirname, '../../web/dist'));

    const public_ = loadSettings({
      ...SECRETS,
      DATA_DIR: dataDir(),
      PUBLIC_API_URL: 'https://vpn.example.com',
    });
    expect(public_.appUrl).toBe('https://vpn.example.com');
    expect(
      loadSettings({ ...SECRETS, DATA_DIR: dataDir(), APP_URL: 'https://app.example.com/' }).appUrl,
    ).toBe('https://app.example.com');
  });

  it('serves metrics on 127.0.0.1:9464 by default, never on the public port, with a real token', () => {
    expect(loadSettings({ ...SECRETS, DATA_DIR: dataDir() })).toMatchObject({
      metricsHost: '127.0.0.1',
      metricsPort: 9464,
      metricsToken: null,
    });
    expect(loadSettings({ ...SECRETS, DATA_DIR: dataDir(), METRICS_PORT: '0' }).metricsPort).toBe(
      0,
    );
    const problems = problemsOf({
      ...SECRETS,
      DATA_DIR: dataDir(),
      PORT: '9100',
      METRICS_PORT: '9100',
      METRICS_TOKEN: 'short',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^METRICS_PORT: must differ from PORT/),
      expect.stringMatching(/^METRICS_TOKEN: must be at least 16 characters/),
    ]);
  });

  it('takes a transaction pooler only with the direct URL its locks need', () => {
    const pooler = 'postgresql://vpn@127.0.0.1:6432/vpn';
    const direct = 'postgresql://vpn@127.0.0.1:5432/vpn';
    expect(loadSettings({ ...SECRETS, DATABASE_URL: pooler })).toMatchObject({
      dbPooler: 'none',
      databaseDirectUrl: null,
      dbStartupWaitS: 60,
    });
    expect(problemsOf({ ...SECRETS, DATABASE_URL: pooler, DB_POOLER: 'pgbouncer' })).toEqual([
      expect.stringMatching(/^DB_POOLER: .*DATABASE_DIRECT_URL/),
    ]);
    expect(problemsOf({ ...SECRETS, DB_POOLER: 'pgbouncer', DATABASE_DIRECT_URL: direct })).toEqual(
      [expect.stringMatching(/^DB_POOLER: .*DATABASE_URL/)],
    );
    expect(
      loadSettings({
        ...SECRETS,
        DATABASE_URL: pooler,
        DB_POOLER: 'pgbouncer',
        DATABASE_DIRECT_URL: direct,
      }),
    ).toMatchObject({ dbPooler: 'pgbouncer', databaseDirectUrl: direct });
    expect(problemsOf({ ...SECRETS, DB_POOLER: 'odyssey' })).toEqual([
      expect.stringMatching(/^DB_POOLER/),
    ]);
  });

  it('does not run migrations against an external database unless asked', () => {
    const url = 'postgresql://u:p@db.example:5432/app';
    expect(loadSettings({ ...SECRETS, DATABASE_URL: url }).migrationsRun).toBe(false);
    expect(
      loadSettings({ ...SECRETS, DATABASE_URL: url, MIGRATIONS_RUN: 'true' }).migrationsRun,
    ).toBe(true);
  });

  it('names every bad setting at once', () => {
    const problems = problemsOf({
      ...SECRETS,
      PORT: 'eighty',
      COOKIE_SECURE: 'maybe',
      CORS_ORIGINS: 'https://ok.example,not-an-origin',
      DATABASE_URL: 'mysql://x',
      BOT_MODE: 'webhook',
      HEAP_GROWING_PERCENT: '-5',
      METRICS_COUNTS_CACHE_S: '7200',
    });
    expect(problems.join('\n')).toMatch(/PORT/);
    expect(problems.join('\n')).toMatch(/METRICS_COUNTS_CACHE_S/);
    expect(problems.join('\n')).toMatch(/HEAP_GROWING_PERCENT/);
    expect(problems.join('\n')).toMatch(/COOKIE_SECURE/);
    expect(problems.join('\n')).toMatch(/CORS_ORIGINS: "not-an-origin"/);
    expect(problems.join('\n')).toMatch(/DATABASE_URL/);
    expect(problems.join('\n')).toMatch(/BOT_WEBHOOK_SECRET/);
    expect(problems.join('\n')).toMatch(/BOT_TOKEN/);
  });

  it('drains for 15 s before a shutdown in production only, always inside the grace', () => {
    expect(loadSettings({ ...SECRETS, DATA_DIR: dataDir() })).toMatchObject({
      shutdownDrainS: 0,
      shutdownGraceS: 25,
      dbPoolWaitMs: 5_000,
    });
    expect(loadSettings({ ...SECRETS, ...PRODUCTION })).toMatchObject({
      shutdownDrainS: 15,
      shutdownGraceS: 25,
    });
    expect(problemsOf({ ...SECRETS, SHUTDOWN_DRAIN_S: '10', SHUTDOWN_GRACE_S: '10' })).toEqual([
      'SHUTDOWN_DRAIN_S: must be shorter than SHUTDOWN_GRACE_S (10), which bounds the whole ' +
        'shutdown, drain included',
    ]);
    expect(problemsOf({ ...SECRETS, DB_POOL_WAIT_MS: '50' })).toEqual([
      'DB_POOL_WAIT_MS: must be a whole number from 100 to 60000, got "50"',
    ]);
  });

  it('requires every secret in production and refuses placeholders', () => {
    const problems = problemsOf({ NODE_ENV: 'production', JWT_ACCESS_SECRET: 'changeme' });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^JWT_ACCESS_SECRET: must be at least/),
        'INTERNAL_SECRET: required when NODE_ENV=production',
        'SEED_PEPPER: required when NODE_ENV=production',
      ]),
    );
  });

  it('refuses production without a database or with this machine as the public addresses', () => {
    const production = { ...SECRETS, ...PRODUCTION };
    expect(problemsOf(production)).toEqual([]);
    const { DATABASE_URL: _unset, ...withoutDatabase } = production;
    expect(problemsOf(withoutDatabase)).toEqual([
      expect.stringMatching(/^DATABASE_URL: required when NODE_ENV=production/),
    ]);
    const { PUBLIC_API_URL: _a, APP_URL: _b, ...defaults } = production;
    expect(problemsOf(defaults)).toEqual([
      expect.stringMatching(/^PUBLIC_API_URL: .*not http:\/\/localhost:3000/),
      expect.stringMatching(/^APP_URL: .*not http:\/\/localhost:3000/),
    ]);
    for (const local of [
      'http://127.0.0.1:3000',
      'http://[::1]:3000',
      'https://api.localhost',
      'http://0.0.0.0',
    ]) {
      expect(problemsOf({ ...production, PUBLIC_API_URL: local })).toEqual([
        expect.stringMatching(/^PUBLIC_API_URL: /),
      ]);
    }
    // Outside production the development defaults stand.
    expect(problemsOf({ ...SECRETS, DATA_DIR: dataDir() })).toEqual([]);
  });

  it('session cookies are Secure by default in production only; COOKIE_SECURE decides when set', () => {
    const secure = (env: Record<string, string>) =>
      loadSettings({ ...SECRETS, DATA_DIR: dataDir(), ...env }).cookieSecure;
    expect(secure({ ...PRODUCTION })).toBe(true);
    expect(secure({ NODE_ENV: 'development' })).toBe(false);
    expect(secure({ NODE_ENV: 'test' })).toBe(false);
    expect(secure({ ...PRODUCTION, COOKIE_SECURE: 'false' })).toBe(false);
    expect(secure({ NODE_ENV: 'development', COOKIE_SECURE: 'true' })).toBe(true);
  });

  it('warns in production when session cookies meet plain HTTP', () => {
    const warningsFor = (env: Record<string, string>) =>
      settingsWarnings(loadSettings({ ...SECRETS, ...PRODUCTION, ...env }));
    expect(warningsFor({})).toEqual([]);
    expect(warningsFor({ PUBLIC_API_URL: 'http://vpn.example.com' })).toEqual([
      expect.stringMatching(
        /^COOKIE_SECURE=true while PUBLIC_API_URL=http:\/\/vpn\.example\.com is plain HTTP: browsers drop Secure cookies/,
      ),
    ]);
    expect(warningsFor({ COOKIE_SECURE: 'false' })).toEqual([
      expect.stringMatching(/^COOKIE_SECURE=false: session cookies will be sent over plain HTTP/),
    ]);
    // Development over plain HTTP is the expected case: nothing to warn about.
    expect(
      settingsWarnings(loadSettings({ ...SECRETS, DATA_DIR: dataDir(), NODE_ENV: 'development' })),
    ).toEqual([]);
  });

  it('warns when TRUST_PROXY counts hops while the port is reachable without the proxy', () => {
    const warningsFor = (env: Record<string, string>) =>
      settingsWarnings(loadSettings({ ...SECRETS, DATA_DIR: dataDir(), ...env }));
    for (const host of ['0.0.0.0', '::', '203.0.113.10']) {
      expect(warningsFor({ TRUST_PROXY: '1', HOST: host })).toEqual([
        expect.stringMatching(/^TRUST_PROXY=1 while HOST=.*forges X-Forwarded-For/),
      ]);
    }
    expect(warningsFor({ TRUST_PROXY: '1', HOST: '127.0.0.1' })).toEqual([]);
    expect(warningsFor({ TRUST_PROXY: '1', HOST: '10.0.0.5' })).toEqual([]);
    expect(warningsFor({ TRUST_PROXY: '10.0.0.0/8', HOST: '0.0.0.0' })).toEqual([]);
    expect(warningsFor({ HOST: '0.0.0.0' })).toEqual([]);
  });

  it('generates missing development secrets once and keeps them', () => {
    const dir = dataDir();
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const first = loadSettings({ DATA_DIR: dir });
    const second = loadSettings({ DATA_DIR: dir });
    warn.mockRestore();
    expect(first.jwtAccessSecret).toHaveLength(43);
    expect(second.jwtAccessSecret).toBe(first.jwtAccessSecret);
    expect(second.seedPepper).toBe(first.seedPepper);
    const file = join(dir, 'secrets.json');
    expect(JSON.parse(readFileSync(file, 'utf8')).INTERNAL_SECRET).toBe(first.internalSecret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('TRUST_PROXY is a hop count or proxy addresses, never true', () => {
    const trust = (value: string) =>
      loadSettings({ ...SECRETS, DATA_DIR: dataDir(), TRUST_PROXY: value }).trustProxy;
    expect(trust('false')).toBe(false);
    expect(trust('2')).toBe(2);
    expect(trust('10.0.0.0/8, 192.0.2.1,::1')).toEqual(['10.0.0.0/8', '192.0.2.1', '::1']);
    for (const bad of ['true', 'yes', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/1']) {
      expect(problemsOf({ ...SECRETS, DATA_DIR: dataDir(), TRUST_PROXY: bad })).toEqual([
        expect.stringMatching(/^TRUST_PROXY: .*never true/),
      ]);
    }
  });

  it('per-address throttles by default let a carrier-grade NAT address through; global bounds cap a flood', () => {
    const { rateLimits } = loadSettings({ ...SECRETS, DATA_DIR: dataDir() });
    // A mobile carrier puts hundreds of subscribers behind one address: sign-ups from such an
    // address in ten minutes, seed sign-ins, game rounds and ticket messages a minute.
    expect(
      rateLimits.signupPerAddress.limit / rateLimits.signupPerAddress.windowS,
    ).toBeGreaterThanOrEqual(0.5);
    expect(
      rateLimits.seedLoginPerAddress.limit / rateLimits.seedLoginPerAddress.windowS,
    ).toBeGreaterThanOrEqual(5);
    expect(rateLimits.gameRoundsPerAddress.limit).toBeGreaterThanOrEqual(
      20 * rateLimits.gameRoundsPerAccount.limit,
    );
    expect(rateLimits.ticketMessagesPerAddress.limit).toBeGreaterThanOrEqual(
      20 * rateLimits.ticketMessagesPerAccount.limit,
    );
    expect(rateLimits.invoicesPerAddress.limit).toBeGreaterThanOrEqual(
      20 * rateLimits.invoicesPerAccount.limit,
    );
    // ...while everyone together stays bounded.
    expect(rateLimits.signupGlobal.limit).toBeGreaterThan(rateLimits.signupPerAddress.limit);
    expect(rateLimits.staffLoginUnknownGlobal).toEqual({ limit: 60, windowS: 60 });
    // Staff sign-in: 5 tries a minute per address and username, 20 per address, 30 per username.
    expect(rateLimits.staffLoginPerAddressAndUsername).toEqual({ limit: 5, windowS: 60 });
    expect(rateLimits.staffLoginPerAddress).toEqual({ limit: 20, windowS: 60 });
    expect(rateLimits.staffLoginPerUsername).toEqual({ limit: 30, windowS: 60 });
  });

  it('reads throttles as limit/window and sizes as the body parser does', () => {
    const s = loadSettings({
      ...SECRETS,
      DATA_DIR: dataDir(),
      RATE_SIGNUP_PER_ADDRESS: '5/60',
      BODY_LIMIT: '16kb',
    });
    expect(s.rateLimits.signupPerAddress).toEqual({ limit: 5, windowS: 60 });
    expect(s.rateLimits.seedLoginPerSeed).toEqual({ limit: 10, windowS: 60 });
    expect(s.bodyLimit).toBe('16kb');
    expect(
      problemsOf({
        ...SECRETS,
        DATA_DIR: dataDir(),
        RATE_GAME_ROUNDS_PER_ACCOUNT: '0/60',
        BODY_LIMIT: 'lots',
      }),
    ).toEqual([
      expect.stringMatching(/^BODY_LIMIT: /),
      expect.stringMatching(/^RATE_GAME_ROUNDS_PER_ACCOUNT: /),
    ]);
  });
});
