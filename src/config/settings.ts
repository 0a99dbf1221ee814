import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  readonly jwtAccessSecret: string;
  readonly internalSecret: string;
  readonly proxyTokenSecret: string;
  readonly dataEncryptionKey: string;
  readonly seedPepper: string;
  readonly accessTokenTtlS: number;
  readonly refreshTokenTtlS: number;
  readonly cookieSecure: boolean;
  readonly cookieDomain: string | null;
  readonly corsOrigins: readonly string[];
  readonly csrfTrustedOrigins: readonly string[];
  readonly appUrl: string;
  readonly botToken: string | null;
  readonly botMode: 'off' | 'polling' | 'webhook';
  readonly botWebhookSecret: string | null;
  readonly telegramPaymentProviderToken: string | null;
  readonly telegramAuthMaxAgeS: number;
  readonly grafanaUrl: string | null;
  readonly tonWalletAddress: string | null;
  readonly tonApiKey: string | null;
  readonly trialDays: number;
  readonly referralRewardDays: number;
  readonly trafficLimitDefaultBytes: bigint;
  readonly nodeHealthIntervalS: number;
  readonly reconcileIntervalS: number;
  readonly rateCacheS: number;
  readonly telegramApiRoot: string;
  readonly tonApiUrl: string;
  readonly tonRatesUrl: string;
  readonly logLevel: string;
  readonly bodyLimit: string;
  readonly trustProxy: boolean;
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

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

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
  const databaseUrl = read.optionalUrl('DATABASE_URL', ['postgres:', 'postgresql:']);
  const secrets = resolveSecrets(env, nodeEnv, dataDir, problems);

  const settings: Settings = {
    nodeEnv,
    host: read.string('HOST', '0.0.0.0'),
    port: read.int('PORT', 3000, 0, 65535),
    dataDir,
    databaseUrl,
    migrationsRun: read.bool('MIGRATIONS_RUN', databaseUrl === null),
    jwtAccessSecret: secrets.JWT_ACCESS_SECRET,
    internalSecret: secrets.INTERNAL_SECRET,
    proxyTokenSecret: secrets.PROXY_TOKEN_SECRET,
    dataEncryptionKey: secrets.DATA_ENCRYPTION_KEY,
    seedPepper: secrets.SEED_PEPPER,
    accessTokenTtlS: read.int('ACCESS_TOKEN_TTL_S', 900, 1, 86_400),
    refreshTokenTtlS: read.int('REFRESH_TOKEN_TTL_S', 2_592_000, 1, 31_536_000),
    cookieSecure: read.bool('COOKIE_SECURE', true),
    cookieDomain: read.optionalString('COOKIE_DOMAIN'),
    corsOrigins: read.origins('CORS_ORIGINS'),
    csrfTrustedOrigins: read.origins('CSRF_TRUSTED_ORIGINS'),
    appUrl: read.url('APP_URL', 'http://localhost:5173').replace(/\/+$/, ''),
    botToken: read.optionalString('BOT_TOKEN'),
    botMode: read.oneOf('BOT_MODE', ['off', 'polling', 'webhook'] as const, 'off'),
    botWebhookSecret: read.optionalString('BOT_WEBHOOK_SECRET'),
    telegramPaymentProviderToken: read.optionalString('TELEGRAM_PAYMENT_PROVIDER_TOKEN'),
    telegramAuthMaxAgeS: read.int('TELEGRAM_AUTH_MAX_AGE_S', 86_400, 1, 31_536_000),
    grafanaUrl: read.optionalUrl('GRAFANA_URL', ['http:', 'https:']),
    tonWalletAddress: read.optionalString('TON_WALLET_ADDRESS'),
    tonApiKey: read.optionalString('TON_API_KEY'),
    trialDays: read.int('TRIAL_DAYS', 3, 1, 365),
    referralRewardDays: read.int('REFERRAL_REWARD_DAYS', 7, 0, 365),
    trafficLimitDefaultBytes: read.bigint('TRAFFIC_LIMIT_DEFAULT_BYTES', 107_374_182_400n),
    nodeHealthIntervalS: read.int('NODE_HEALTH_INTERVAL_S', 60, 1, 86_400),
    reconcileIntervalS: read.int('RECONCILE_INTERVAL_S', 60, 1, 86_400),
    rateCacheS: read.int('RATE_CACHE_S', 60, 0, 86_400),
    telegramApiRoot: read.baseUrl('TELEGRAM_API_ROOT', 'https://api.telegram.org'),
    tonApiUrl: read.baseUrl('TON_API_URL', 'https://toncenter.com'),
    tonRatesUrl: read.baseUrl('TON_RATES_URL', 'https://tonapi.io'),
    logLevel: read.oneOf(
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      nodeEnv === 'test' ? 'silent' : 'info',
    ),
    bodyLimit: read.string('BODY_LIMIT', '1mb'),
    trustProxy: read.bool('TRUST_PROXY', false),
  };

  if (settings.botMode === 'webhook' && !settings.botWebhookSecret) {
    problems.push('BOT_WEBHOOK_SECRET: required when BOT_MODE=webhook');
  }
  if (settings.botMode !== 'off' && !settings.botToken) {
    problems.push(`BOT_TOKEN: required when BOT_MODE=${settings.botMode}`);
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return Object.freeze(settings);
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
