/**
 * Every setting, read and checked once at boot. Over 300 lines because it is one list of about a
 * hundred settings with their defaults, ranges and cross-checks: splitting it would scatter the
 * single place an operator's typo is caught.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isInwardAddress } from '../common/inward-address';
import { dirname, resolve } from 'node:path';

/** Every setting of the service, validated once at boot. Nothing else reads `process.env`. */
export interface Settings {
  readonly nodeEnv: 'development' | 'production' | 'test';
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** Unset means: start an embedded PostgreSQL under `dataDir`. */
  readonly databaseUrl: string | null;
  readonly migrationsRun: boolean;
  /**
   * What `DATABASE_URL` points at: PostgreSQL itself (`none`), or a transaction-mode pooler
   * (`pgbouncer`: no named prepared statements, no session parameters at connect).
   */
  readonly dbPooler: 'none' | 'pgbouncer';
  /**
   * PostgreSQL itself when `DATABASE_URL` is a pooler: the locks that outlive a transaction (jobs,
   * bot polling, migrations at start) hold their connections here. Required with a pooler.
   */
  readonly databaseDirectUrl: string | null;
  /** At start, how long an unreachable or refusing database is waited for before exiting. */
  readonly dbStartupWaitS: number;
  /** Longest a statement of the service may run; 0 means no limit. */
  readonly dbStatementTimeoutMs: number;
  /**
   * Longest a request waits for the database before it is answered 503: for a pool connection, or
   * for its turn in a queue in front of a shared statement.
   */
  readonly dbPoolWaitMs: number;
  /** On SIGTERM, the longest the whole shutdown takes (drain, requests in flight, jobs) before exit. */
  readonly shutdownGraceS: number;
  /**
   * On SIGTERM, how long the service keeps serving with `/health` at 503 before it stops accepting
   * connections, so that a load balancer notices first. Part of `shutdownGraceS`.
   */
  readonly shutdownDrainS: number;
  /**
   * How far V8 lets the old generation grow past what its last full collection kept, in percent
   * (V8's `--heap-growing-percent`); 0 leaves V8's own growing policy.
   */
  readonly heapGrowingPercent: number;
  readonly jwtAccessSecret: string;
  readonly internalSecret: string;
  readonly proxyTokenSecret: string;
  readonly dataEncryptionKey: string;
  /** Earlier DATA_ENCRYPTION_KEYs: values sealed under them still open, until resealed. */
  readonly dataEncryptionKeyPrevious: string[];
  readonly seedPepper: string;
  readonly accessTokenTtlS: number;
  readonly refreshTokenTtlS: number;
  readonly cookieSecure: boolean;
  readonly cookieDomain: string | null;
  readonly corsOrigins: readonly string[];
  readonly csrfTrustedOrigins: readonly string[];
  readonly appUrl: string;
  /**
   * The service's own base URL as the outside world reaches it: the bot's webhook address, and
   * what each node's proxy calls (written into its settings).
   */
  readonly publicApiUrl: string;
  /** The built web app (`index.html` and `assets/`), served outside /api when it exists. */
  readonly webDir: string;
  readonly botToken: string | null;
  readonly botMode: 'off' | 'polling' | 'webhook';
  readonly botWebhookSecret: string | null;
  readonly telegramPaymentProviderToken: string | null;
  /** How often the bot's subscription reminders run. */
  readonly botReminderIntervalS: number;
  readonly telegramAuthMaxAgeS: number;
  readonly grafanaUrl: string | null;
  /** Address of the Prometheus listener, apart from the public one; port 0 turns it off. */
  readonly metricsHost: string;
  readonly metricsPort: number;
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  readonly metricsToken: string | null;
  /** How long database-read metrics are reused between scrapes. */
  readonly metricsCacheS: number;
  /**
   * How long the metrics that count whole tables (accounts, subscriptions, devices, payments) are
   * reused: each read scans its table (half a second of a core at a million accounts).
   */
  readonly metricsCountsCacheS: number;
  readonly tonWalletAddress: string | null;
  /**
   * Development only: the service runs local fake TON rates and chain and points the TON provider at
   * them, and a pending TON invoice can be paid by pressing a button (src/billing/demo/).
   */
  readonly demoPayments: boolean;
  readonly tonApiKey: string | null;
  /** toncenter requests per second this service allows itself (toncenter: 1 without a key, 10 with). */
  readonly tonApiRps: number;
  readonly trialDays: number;
  readonly referralRewardDays: number;
  readonly trafficLimitDefaultBytes: bigint;
  readonly nodeHealthIntervalS: number;
  /**
   * Accept loopback, link-local, private and unspecified addresses as node hosts. Off by default:
   * otherwise the node list probes the service's own network (its health checks connect there).
   */
  readonly nodePrivateHostsAllowed: boolean;
  /** How many node health probes run at once. */
  readonly nodeHealthConcurrency: number;
  /** How long one TCP probe waits; kept below the interval. */
  readonly nodeHealthTimeoutMs: number;
  /** A provisioning still running after this long is marked failed by the watchdog. */
  readonly nodeProvisionTimeoutS: number;
  readonly nodeWatchdogIntervalS: number;
  /**
   * The node agent's bundle that provisioning uploads; null = `agent/dist/agent.js` of this
   * install (made by `npm run build`).
   */
  readonly nodeAgentBundle: string | null;
  /**
   * SHA-256 (hex) of the Xray release archive provisioning may install on a node
   * (`Xray-linux-64.zip` of the script's XRAY_VERSION); null = the digest recorded in
   * deploy/node/provision.sh, if any. A node whose archive matches neither is not given Xray.
   */
  readonly xrayArchiveSha256: string | null;
  readonly sessionTokenTtlS: number;
  /**
   * Nodes one user's routing list holds at most (0: every online node). A fleet of thousands makes
   * every list megabytes long; with a bound, each user gets the same nodes each time (rendezvous
   * hashing of user and node), and users spread evenly over the fleet.
   */
  readonly routingNodesMax: number;
  /** Devices of an account without a plan of its own (a trial, a manual grant); a plan's default. */
  readonly deviceLimitDefault: number;
  /** A device that changed node or network more often than this in 10 minutes is flagged shared. */
  readonly deviceSwitchesSuspect: number;
  /** The hours a client app waits between fetches of the subscription link. */
  readonly subUpdateIntervalH: number;
  /** The bound, in seconds, within which a device's id starts or stops working on its nodes. */
  readonly credentialsPropagationS: number;
  /** The base of subscription links (`<SUB_URL>/sub/<token>`), without a trailing slash. */
  readonly subUrl: string;
  /**
   * Every staff account (any role that signs in with a password) must have a second factor: one
   * without it may only enrol until it has; its other staff routes answer 403.
   */
  readonly staffTotpRequired: boolean;
  readonly reconcileIntervalS: number;
  /**
   * Period of the clean-ups: expired throttle rows, old job records, spent routing-token ids past
   * their expiry and old traffic-report ids.
   */
  readonly cleanupIntervalS: number;
  /** Period of the traffic-reset job (plans' `traffic_reset`) and of the bot's traffic warnings. */
  readonly trafficResetIntervalS: number;
  readonly rateCacheS: number;
  readonly telegramApiRoot: string;
  readonly tonApiUrl: string;
  readonly tonRatesUrl: string;
  readonly logLevel: string;
  /** Serve the Swagger UI and document (`/api/v1/docs`); off by default in production. */
  readonly docsEnabled: boolean;
  /** Byte limit of a request body; `bodyLimitLarge` on the few routes that take large ones. */
  readonly bodyLimit: string;
  readonly bodyLimitLarge: string;
  /**
   * Bytes of large bodies (traffic reports) being read, parsed, waiting or applied at once; more
   * wait, unread, until some are answered.
   */
  readonly largeBodiesInMemory: string;
  /**
   * Which `X-Forwarded-For` entries to believe: false (none), a number of proxy hops, or the
   * proxies' addresses and CIDRs. Never "all": the left-most entry is whatever the client wrote.
   */
  readonly trustProxy: false | number | readonly string[];
  /** Timeouts and the connection cap of the public listener (src/system/http-server.ts). */
  readonly http: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly maxConnections: number;
  };
  /** Limits per client address or account; see docs/development.md "Hostile requests and throttles". */
  readonly rateLimits: RateLimits;
}

/** A throttle: at most `limit` requests per `windowS` seconds, then refused for a window. */
export interface RateLimit {
  readonly limit: number;
  readonly windowS: number;
}

export interface RateLimits {
  /** POST /auth/seed, /auth/telegram and /auth/bot/login-codes together, per address. */
  readonly signupPerAddress: RateLimit;
  /** The same sign-ups from everyone together: bounds a flood from many (or forged) addresses. */
  readonly signupGlobal: RateLimit;
  /**
   * Staff sign-ins per client address, per address and username, and per username. A device that
   * signed in as that username before counts against itself instead, under each of the three.
   */
  readonly staffLoginPerAddress: RateLimit;
  readonly staffLoginPerAddressAndUsername: RateLimit;
  readonly staffLoginPerUsername: RateLimit;
  /** Password checks of staff sign-ins naming an unknown username, from everyone together. */
  readonly staffLoginUnknownGlobal: RateLimit;
  readonly seedLoginPerAddress: RateLimit;
  /** Attempts at one seed, wherever they come from. */
  readonly seedLoginPerSeed: RateLimit;
  readonly gameRoundsPerAccount: RateLimit;
  readonly gameRoundsPerAddress: RateLimit;
  /** New tickets and messages of users. */
  readonly ticketMessagesPerAccount: RateLimit;
  readonly ticketMessagesPerAddress: RateLimit;
  /** Messages of users on one ticket. */
  readonly ticketMessagesPerTicket: RateLimit;
  /** Invoice orders (each may call the Bot API or the rates API), from the app and the bot. */
  readonly invoicesPerAccount: RateLimit;
  readonly invoicesPerAddress: RateLimit;
}

export const SECRET_NAMES = [
  'JWT_ACCESS_SECRET',
  'INTERNAL_SECRET',
  'PROXY_TOKEN_SECRET',
  'DATA_ENCRYPTION_KEY',
  'SEED_PEPPER',
] as const;
type SecretName = (typeof SECRET_NAMES)[number];

const PLACEHOLDERS = new Set(['', 'changeme', 'change-me', 'secret', 'please-change-me']);
const MIN_SECRET_LENGTH = 32;
const MIN_METRICS_TOKEN_LENGTH = 16;

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

/** `DATABASE_URL` and `DATABASE_DIRECT_URL`, each a PostgreSQL URL or unset. */
function readDatabaseUrls(read: Reader): {
  databaseUrl: string | null;
  databaseDirectUrl: string | null;
} {
  return {
    databaseUrl: read.optionalUrl('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseDirectUrl: read.optionalUrl('DATABASE_DIRECT_URL', ['postgres:', 'postgresql:']),
  };
}

/**
 * The database settings alone, read and checked as `loadSettings` reads them: for the migration
 * commands, which need no other setting. Throws `SettingsError` naming a bad one.
 */
export function loadDatabaseUrls(env: Env = process.env): {
  databaseUrl: string | null;
  databaseDirectUrl: string | null;
} {
  const problems: string[] = [];
  const urls = readDatabaseUrls(new Reader(env, problems));
  if (problems.length > 0) throw new SettingsError(problems);
  return urls;
}

/** Reads and validates the environment. Throws `SettingsError` naming every bad setting. */
export function loadSettings(env: Env = process.env): Settings {
  const problems: string[] = [];
  const read = new Reader(env, problems);

  const nodeEnv = read.oneOf(
    'NODE_ENV',
    ['development', 'production', 'test'] as const,
    'development',
  );
  const dataDir = resolve(read.string('DATA_DIR', '.data'));
  const { databaseUrl, databaseDirectUrl } = readDatabaseUrls(read);
  const secrets = resolveSecrets(env, nodeEnv, dataDir, problems);

  const host = read.string('HOST', '0.0.0.0');
  const port = read.int('PORT', 3000, 0, 65535);
  const publicApiUrl = read.baseUrl('PUBLIC_API_URL', `http://localhost:${port}`);

  const settings: Settings = {
    nodeEnv,
    host,
    port,
    dataDir,
    databaseUrl,
    migrationsRun: read.bool('MIGRATIONS_RUN', databaseUrl === null),
    dbPooler: read.oneOf('DB_POOLER', ['none', 'pgbouncer'] as const, 'none'),
    databaseDirectUrl,
    dbStartupWaitS: read.int('DB_STARTUP_WAIT_S', 60, 1, 3600),
    dbStatementTimeoutMs: read.int('DB_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
    dbPoolWaitMs: read.int('DB_POOL_WAIT_MS', 5_000, 100, 60_000),
    shutdownGraceS: read.int('SHUTDOWN_GRACE_S', 25, 0, 600),
    // A balancer checks health every 5-10 s and wants two or three failures; outside production
    // nothing is balanced, and Ctrl-C should stop at once.
    shutdownDrainS: read.int('SHUTDOWN_DRAIN_S', nodeEnv === 'production' ? 15 : 0, 0, 600),
    heapGrowingPercent: read.int('HEAP_GROWING_PERCENT', 100, 0, 400),
    jwtAccessSecret: secrets.JWT_ACCESS_SECRET,
    internalSecret: secrets.INTERNAL_SECRET,
    proxyTokenSecret: secrets.PROXY_TOKEN_SECRET,
    dataEncryptionKey: secrets.DATA_ENCRYPTION_KEY,
    dataEncryptionKeyPrevious: read.secretList('DATA_ENCRYPTION_KEY_PREVIOUS'),
    seedPepper: secrets.SEED_PEPPER,
    accessTokenTtlS: read.int('ACCESS_TOKEN_TTL_S', 900, 1, 86_400),
    refreshTokenTtlS: read.int('REFRESH_TOKEN_TTL_S', 2_592_000, 1, 31_536_000),
    // Browsers drop a Secure cookie set over plain HTTP (localhost aside): a development instance
    // browsed at the machine's own address would answer a sign-in and keep no session.
    cookieSecure: read.bool('COOKIE_SECURE', nodeEnv === 'production'),
    cookieDomain: read.optionalString('COOKIE_DOMAIN'),
    corsOrigins: read.origins('CORS_ORIGINS'),
    csrfTrustedOrigins: read.origins('CSRF_TRUSTED_ORIGINS'),
    appUrl: read.url('APP_URL', publicApiUrl).replace(/\/+$/, ''),
    publicApiUrl,
    webDir: resolve(read.string('WEB_DIR', resolve(__dirname, '../../web/dist'))),
    botToken: read.optionalString('BOT_TOKEN'),
    botMode: read.oneOf('BOT_MODE', ['off', 'polling', 'webhook'] as const, 'off'),
    botWebhookSecret: read.optionalString('BOT_WEBHOOK_SECRET'),
    telegramPaymentProviderToken: read.optionalString('TELEGRAM_PAYMENT_PROVIDER_TOKEN'),
    botReminderIntervalS: read.int('BOT_REMINDER_INTERVAL_S', 3600, 1, 86_400),
    telegramAuthMaxAgeS: read.int('TELEGRAM_AUTH_MAX_AGE_S', 86_400, 1, 31_536_000),
    grafanaUrl: read.optionalUrl('GRAFANA_URL', ['http:', 'https:']),
    metricsHost: read.string('METRICS_HOST', '127.0.0.1'),
    metricsPort: read.int('METRICS_PORT', 9464, 0, 65535),
    metricsToken: read.optionalString('METRICS_TOKEN'),
    metricsCacheS: read.int('METRICS_CACHE_S', 5, 0, 300),
    metricsCountsCacheS: read.int('METRICS_COUNTS_CACHE_S', 300, 0, 3600),
    tonWalletAddress: read.optionalString('TON_WALLET_ADDRESS'),
    demoPayments: read.bool('DEMO_PAYMENTS', false),
    tonApiKey: read.optionalString('TON_API_KEY'),
    tonApiRps: read.int('TON_API_RPS', read.optionalString('TON_API_KEY') ? 10 : 1, 1, 1000),
    trialDays: read.int('TRIAL_DAYS', 3, 1, 365),
    referralRewardDays: read.int('REFERRAL_REWARD_DAYS', 7, 0, 365),
    trafficLimitDefaultBytes: read.bigint('TRAFFIC_LIMIT_DEFAULT_BYTES', 107_374_182_400n),
    nodeHealthIntervalS: read.int('NODE_HEALTH_INTERVAL_S', 60, 1, 86_400),
    nodePrivateHostsAllowed: read.bool('NODE_PRIVATE_HOSTS_ALLOWED', false),
    nodeHealthConcurrency: read.int('NODE_HEALTH_CONCURRENCY', 50, 1, 1000),
    nodeHealthTimeoutMs: read.int('NODE_HEALTH_TIMEOUT_MS', 3000, 100, 60_000),
    nodeProvisionTimeoutS: read.int('NODE_PROVISION_TIMEOUT_S', 600, 1, 86_400),
    nodeWatchdogIntervalS: read.int('NODE_WATCHDOG_INTERVAL_S', 60, 1, 86_400),
    nodeAgentBundle: read.optionalString('NODE_AGENT_BUNDLE'),
    xrayArchiveSha256: read.optionalString('XRAY_ARCHIVE_SHA256')?.toLowerCase() ?? null,
    sessionTokenTtlS: read.int('SESSION_TOKEN_TTL_S', 300, 1, 86_400),
    routingNodesMax: read.int('ROUTING_NODES_MAX', 0, 0, 10_000),
    deviceLimitDefault: read.int('DEVICE_LIMIT_DEFAULT', 3, 1, 20),
    staffTotpRequired: read.bool('STAFF_TOTP_REQUIRED', false),
    deviceSwitchesSuspect: read.int('DEVICE_SWITCHES_SUSPECT', 6, 1, 1000),
    subUpdateIntervalH: read.int('SUB_UPDATE_INTERVAL_H', 12, 1, 168),
    credentialsPropagationS: read.int('CREDENTIALS_PROPAGATION_S', 5, 1, 600),
    subUrl: read.baseUrl('SUB_URL', publicApiUrl),
    reconcileIntervalS: read.int('RECONCILE_INTERVAL_S', 60, 1, 86_400),
    cleanupIntervalS: read.int('CLEANUP_INTERVAL_S', 60, 1, 86_400),
    trafficResetIntervalS: read.int('TRAFFIC_RESET_INTERVAL_S', 60, 1, 3600),
    rateCacheS: read.int('RATE_CACHE_S', 60, 0, 86_400),
    telegramApiRoot: read.baseUrl('TELEGRAM_API_ROOT', 'https://api.telegram.org'),
    tonApiUrl: read.baseUrl('TON_API_URL', 'https://toncenter.com'),
    tonRatesUrl: read.baseUrl('TON_RATES_URL', 'https://tonapi.io'),
    logLevel: read.oneOf(
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      nodeEnv === 'test' ? 'silent' : 'info',
    ),
    docsEnabled: read.bool('DOCS_ENABLED', nodeEnv !== 'production'),
    bodyLimit: read.byteSize('BODY_LIMIT', '64kb'),
    bodyLimitLarge: read.byteSize('BODY_LIMIT_LARGE', '4mb'),
    largeBodiesInMemory: read.byteSize('LARGE_BODIES_IN_MEMORY', '4mb'),
    trustProxy: read.trustProxy('TRUST_PROXY'),
    http: {
      headersTimeoutMs: read.int('HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 120_000),
      requestTimeoutMs: read.int('HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
      keepAliveTimeoutMs: read.int('HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000, 1_000, 600_000),
      maxConnections: read.int('HTTP_MAX_CONNECTIONS', 2_000, 1, 1_000_000),
    },
    rateLimits: {
      // Per address: what one carrier-grade NAT address (many mobile subscribers) carries; abuse
      // is bounded by the per-account, per-seed and global limits (docs/security.md, "Throttles").
      signupPerAddress: read.rate('RATE_SIGNUP_PER_ADDRESS', '300/600'),
      signupGlobal: read.rate('RATE_SIGNUP_GLOBAL', '1800/600'),
      staffLoginPerAddress: read.rate('RATE_STAFF_LOGIN_PER_ADDRESS', '20/60'),
      staffLoginPerAddressAndUsername: read.rate(
        'RATE_STAFF_LOGIN_PER_ADDRESS_AND_USERNAME',
        '5/60',
      ),
      staffLoginPerUsername: read.rate('RATE_STAFF_LOGIN_PER_USERNAME', '30/60'),
      staffLoginUnknownGlobal: read.rate('RATE_STAFF_LOGIN_UNKNOWN_GLOBAL', '60/60'),
      seedLoginPerAddress: read.rate('RATE_SEED_LOGIN_PER_ADDRESS', '300/60'),
      seedLoginPerSeed: read.rate('RATE_SEED_LOGIN_PER_SEED', '10/60'),
      gameRoundsPerAccount: read.rate('RATE_GAME_ROUNDS_PER_ACCOUNT', '20/60'),
      gameRoundsPerAddress: read.rate('RATE_GAME_ROUNDS_PER_ADDRESS', '600/60'),
      ticketMessagesPerAccount: read.rate('RATE_TICKET_MESSAGES_PER_ACCOUNT', '10/60'),
      ticketMessagesPerAddress: read.rate('RATE_TICKET_MESSAGES_PER_ADDRESS', '300/60'),
      ticketMessagesPerTicket: read.rate('RATE_TICKET_MESSAGES_PER_TICKET', '30/3600'),
      invoicesPerAccount: read.rate('RATE_INVOICES_PER_ACCOUNT', '20/3600'),
      invoicesPerAddress: read.rate('RATE_INVOICES_PER_ADDRESS', '600/3600'),
    },
  };

  if (settings.dbPooler !== 'none' && (!settings.databaseUrl || !settings.databaseDirectUrl)) {
    problems.push(
      `DB_POOLER: ${settings.dbPooler} needs DATABASE_URL (the pooler) and DATABASE_DIRECT_URL (PostgreSQL itself, for the locks that outlive a transaction)`,
    );
  }
  if (settings.xrayArchiveSha256 !== null && !/^[0-9a-f]{64}$/.test(settings.xrayArchiveSha256)) {
    problems.push(
      'XRAY_ARCHIVE_SHA256: must be 64 hex digits (the SHA2-256 line of the .dgst file)',
    );
  }
  if (settings.botMode === 'webhook' && !settings.botWebhookSecret) {
    problems.push('BOT_WEBHOOK_SECRET: required when BOT_MODE=webhook');
  }
  if (settings.botMode !== 'off' && !settings.botToken) {
    problems.push(`BOT_TOKEN: required when BOT_MODE=${settings.botMode}`);
  }
  if (settings.metricsPort !== 0 && settings.metricsPort === settings.port) {
    problems.push(
      'METRICS_PORT: must differ from PORT (metrics are never served on the public port)',
    );
  }
  if (settings.metricsToken !== null && settings.metricsToken.length < MIN_METRICS_TOKEN_LENGTH) {
    problems.push(`METRICS_TOKEN: must be at least ${MIN_METRICS_TOKEN_LENGTH} characters`);
  }
  if (settings.shutdownDrainS > 0 && settings.shutdownDrainS >= settings.shutdownGraceS) {
    problems.push(
      `SHUTDOWN_DRAIN_S: must be shorter than SHUTDOWN_GRACE_S (${settings.shutdownGraceS}), ` +
        'which bounds the whole shutdown, drain included',
    );
  }
  if (settings.http.headersTimeoutMs > settings.http.requestTimeoutMs) {
    problems.push('HTTP_HEADERS_TIMEOUT_MS: must not be longer than HTTP_REQUEST_TIMEOUT_MS');
  }
  if (nodeEnv === 'production') problems.push(...productionProblems(settings));
  if (problems.length > 0) throw new SettingsError(problems);
  return Object.freeze(settings);
}

/** Settings that are fine on a developer's machine and wrong for a real deployment. */
function productionProblems(settings: Settings): string[] {
  const problems: string[] = [];
  if (settings.demoPayments) {
    problems.push(
      'DEMO_PAYMENTS: fake TON rates and a fake chain, where a button pays; refused when ' +
        'NODE_ENV=production',
    );
  }
  if (settings.databaseUrl === null) {
    problems.push(
      'DATABASE_URL: required when NODE_ENV=production (without it the service would start ' +
        'the embedded development PostgreSQL)',
    );
  }
  for (const [name, value] of [
    ['PUBLIC_API_URL', settings.publicApiUrl],
    ['APP_URL', settings.appUrl],
  ] as const) {
    if (isLocalHostname(new URL(value).hostname)) {
      problems.push(
        `${name}: must be the address the outside world reaches when NODE_ENV=production, ` +
          `not ${value} (nodes and Telegram users are given it)`,
      );
    }
  }
  return problems;
}

/** localhost, its subdomains, loopback and unspecified addresses: this machine only. */
function isLocalHostname(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.') || host === '0.0.0.0';
  return host === '::1' || host === '::';
}

/**
 * Warnings for settings that are allowed but risky, logged loudly at start-up. A hop count in
 * TRUST_PROXY believes the last X-Forwarded-For entries of whoever connects: when the port is
 * reachable without the proxy (HOST on all interfaces or a public address), a client connecting
 * directly writes its own entries and picks the address every per-address throttle counts.
 * Listing the proxies' addresses instead is safe: entries are believed only from those. In
 * production, session cookies sent over plain HTTP, or Secure cookies for a service whose public
 * address is plain HTTP (browsers drop them: every sign-in seems to work and keeps no session).
 */
export function settingsWarnings(settings: Settings): string[] {
  const warnings: string[] = [];
  if (typeof settings.trustProxy === 'number' && settings.trustProxy > 0) {
    const host = settings.host;
    const reachable = host === '' || host === '0.0.0.0' || host === '::' || isPublicAddress(host);
    if (reachable) {
      warnings.push(
        `TRUST_PROXY=${settings.trustProxy} while HOST=${host || '(all interfaces)'}: a client ` +
          'that reaches the port without the proxy forges X-Forwarded-For and every ' +
          'per-address throttle with it. Bind HOST to the address only the proxy reaches, or ' +
          "set TRUST_PROXY to the proxies' addresses/CIDRs.",
      );
    }
  }
  if (settings.nodeEnv === 'production' && !settings.cookieSecure) {
    warnings.push(
      'COOKIE_SECURE=false: session cookies will be sent over plain HTTP. Never run like this ' +
        'in production.',
    );
  } else if (settings.nodeEnv === 'production' && settings.publicApiUrl.startsWith('http://')) {
    warnings.push(
      `COOKIE_SECURE=true while PUBLIC_API_URL=${settings.publicApiUrl} is plain HTTP: browsers ` +
        'drop Secure cookies over HTTP, so sign-ins answer and keep no session. Serve the ' +
        'service over HTTPS (a TLS proxy) and give PUBLIC_API_URL its https:// address.',
    );
  }
  return warnings;
}

/** An IP address that is neither loopback, link-local, private nor unspecified. */
function isPublicAddress(host: string): boolean {
  return isIP(host) !== 0 && !isInwardAddress(host);
}

/**
 * Secrets come from the environment. Outside production a missing one is generated once and kept
 * in `<dataDir>/secrets.json`, so sessions survive restarts; in production each is required.
 */
function resolveSecrets(
  env: Env,
  nodeEnv: Settings['nodeEnv'],
  dataDir: string,
  problems: string[],
): Record<SecretName, string> {
  const file = resolve(dataDir, 'secrets.json');
  let stored: Partial<Record<SecretName, string>> | null = null;
  const result = {} as Record<SecretName, string>;
  const generated: SecretName[] = [];

  for (const name of SECRET_NAMES) {
    const given = env[name];
    if (given !== undefined && given !== '') {
      if (PLACEHOLDERS.has(given.toLowerCase()) || given.length < MIN_SECRET_LENGTH) {
        problems.push(
          `${name}: must be at least ${MIN_SECRET_LENGTH} characters and not a placeholder`,
        );
      }
      result[name] = given;
      continue;
    }
    if (nodeEnv === 'production') {
      problems.push(`${name}: required when NODE_ENV=production`);
      result[name] = '';
      continue;
    }
    stored ??= readSecretsFile(file);
    const value = stored[name] ?? randomBytes(32).toString('base64url');
    if (stored[name] === undefined) generated.push(name);
    stored[name] = value;
    result[name] = value;
  }

  if (generated.length > 0 && stored) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2) + '\n', { mode: 0o600 });
    console.warn(
      `WARNING: generated development secrets (${generated.join(', ')}) in ${file}. ` +
        'Set them in the environment for any real deployment.',
    );
  }
  return result;
}

function readSecretsFile(file: string): Partial<Record<SecretName, string>> {
  if (!existsSync(file)) return {};
  return JSON.parse(readFileSync(file, 'utf8')) as Partial<Record<SecretName, string>>;
}

/** Reads one setting at a time, recording a problem instead of throwing so all are reported. */
class Reader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optionalString(name: string): string | null {
    return this.raw(name) ?? null;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const parsed = /^-?\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      this.problems.push(`${name}: must be a whole number from ${min} to ${max}, got "${value}"`);
      return fallback;
    }
    return parsed;
  }

  bigint(name: string, fallback: bigint): bigint {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d{1,18}$/.test(value)) {
      this.problems.push(`${name}: must be a whole number of bytes, got "${value}"`);
      return fallback;
    }
    return BigInt(value);
  }

  /** `<limit>/<window seconds>`, e.g. `20/600`. */
  rate(name: string, fallback: string): RateLimit {
    const value = this.raw(name) ?? fallback;
    const match = /^(\d{1,6})\/(\d{1,6})$/.exec(value);
    if (match && Number(match[1]) >= 1 && Number(match[2]) >= 1) {
      return { limit: Number(match[1]), windowS: Number(match[2]) };
    }
    this.problems.push(`${name}: must be <limit>/<window seconds> like 20/600, got "${value}"`);
    const [limit, windowS] = fallback.split('/').map(Number);
    return { limit, windowS };
  }

  /** false, a hop count, or a comma-separated list of proxy addresses and CIDRs; never `true`. */
  trustProxy(name: string): false | number | string[] {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined || value === 'false' || value === '0') return false;
    if (/^\d{1,2}$/.test(value)) return Number(value);
    const parts = value.split(',').map((p) => p.trim());
    const valid = parts.every((part) => {
      const [address, bits, extra] = part.split('/');
      const family = isIP(address);
      if (family === 0 || extra !== undefined) return false;
      if (bits === undefined) return true;
      return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
    });
    if (valid) return parts;
    this.problems.push(
      `${name}: must be false, a number of proxy hops, or proxy addresses/CIDRs separated by ` +
        `commas (never true, which would trust any client's X-Forwarded-For), got "${value}"`,
    );
    return false;
  }

  /** A size as the body parser reads it: bytes, or a number with b, kb or mb. */
  byteSize(name: string, fallback: string): string {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (/^\d{1,9}(b|kb|mb)?$/i.test(value)) return value.toLowerCase();
    this.problems.push(`${name}: must be a size like 64kb or 2mb, got "${value}"`);
    return fallback;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no'].includes(value)) return false;
    this.problems.push(`${name}: must be true or false, got "${value}"`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name}: must be one of ${allowed.join(', ')}, got "${value}"`);
    return fallback;
  }

  url(name: string, fallback: string): string {
    return this.optionalUrl(name, ['http:', 'https:']) ?? fallback;
  }

  optionalUrl(name: string, protocols: string[]): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    try {
      const url = new URL(value);
      if (protocols.includes(url.protocol)) return value;
    } catch {
      // reported below
    }
    this.problems.push(`${name}: must be a ${protocols.join(' or ')} URL`);
    return null;
  }

  /** A scheme and host (and port) only: the service appends the paths. */
  baseUrl(name: string, fallback: string): string {
    const value = this.url(name, fallback);
    return value.replace(/\/+$/, '');
  }

  /** Comma-separated secrets, each as long as a secret must be. */
  secretList(name: string): string[] {
    const values = (this.raw(name) ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
    if (values.some((value) => value.length < MIN_SECRET_LENGTH)) {
      this.problems.push(
        `${name}: each comma-separated key must be at least ${MIN_SECRET_LENGTH} characters`,
      );
    }
    return values;
  }

  origins(name: string): string[] {
    const value = this.raw(name);
    if (value === undefined) return [];
    const origins: string[] = [];
    for (const part of value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      try {
        const url = new URL(part);
        if (url.origin !== 'null' && url.origin === part.replace(/\/+$/, '')) {
          origins.push(url.origin);
          continue;
        }
      } catch {
        // reported below
      }
      this.problems.push(`${name}: "${part}" is not a full origin like https://app.example.com`);
    }
    return origins;
  }
}
