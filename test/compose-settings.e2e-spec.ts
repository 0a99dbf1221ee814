import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SECRET_NAMES } from '../src/config/settings';

const ROOT = resolve(__dirname, '..');

/** Settings a deployment must decide: `docker compose up` stops at once when one is unset. */
const REQUIRED = [...SECRET_NAMES, 'PUBLIC_API_URL', 'APP_URL', 'TRUST_PROXY'];

/**
 * Settings docker-compose.yml leaves to the service's defaults (tuning, or fixed by the image).
 * A new setting lands either here or in the compose file: a reviewed choice either way.
 */
const LEFT_TO_DEFAULTS = [
  'ACCESS_TOKEN_TTL_S',
  // Devices and links (docs/connecting.md): defaults an operator changes in the env file.
  'CREDENTIALS_PROPAGATION_S',
  'DEVICE_LIMIT_DEFAULT',
  'DEVICE_SWITCHES_SUSPECT',
  'SUB_UPDATE_INTERVAL_H',
  'BODY_LIMIT',
  'BODY_LIMIT_LARGE',
  'BOT_REMINDER_INTERVAL_S',
  'CLEANUP_INTERVAL_S',
  'COOKIE_SECURE',
  'DATA_DIR',
  'DB_POOL_WAIT_MS',
  'DB_STARTUP_WAIT_S',
  'DB_STATEMENT_TIMEOUT_MS',
  // Development only: refused when NODE_ENV=production, as the image runs.
  'DEMO_PAYMENTS',
  'HEAP_GROWING_PERCENT',
  'HOST',
  'HTTP_HEADERS_TIMEOUT_MS',
  'HTTP_KEEP_ALIVE_TIMEOUT_MS',
  'HTTP_MAX_CONNECTIONS',
  'HTTP_REQUEST_TIMEOUT_MS',
  'LARGE_BODIES_IN_MEMORY',
  'METRICS_CACHE_S',
  'METRICS_COUNTS_CACHE_S',
  // The image's own agent/dist/agent.js.
  'NODE_AGENT_BUNDLE',
  'NODE_HEALTH_CONCURRENCY',
  'NODE_HEALTH_INTERVAL_S',
  'NODE_HEALTH_TIMEOUT_MS',
  'NODE_PROVISION_TIMEOUT_S',
  'NODE_WATCHDOG_INTERVAL_S',
  'PORT',
  'RATE_CACHE_S',
  'RATE_GAME_ROUNDS_PER_ACCOUNT',
  'RATE_GAME_ROUNDS_PER_ADDRESS',
  'RATE_INVOICES_PER_ACCOUNT',
  'RATE_INVOICES_PER_ADDRESS',
  'RATE_SEED_LOGIN_PER_ADDRESS',
  'RATE_SEED_LOGIN_PER_SEED',
  'RATE_SIGNUP_GLOBAL',
  'RATE_SIGNUP_PER_ADDRESS',
  'RATE_STAFF_LOGIN_PER_ADDRESS',
  'RATE_STAFF_LOGIN_PER_ADDRESS_AND_USERNAME',
  'RATE_STAFF_LOGIN_PER_USERNAME',
  'RATE_STAFF_LOGIN_UNKNOWN_GLOBAL',
  'RATE_TICKET_MESSAGES_PER_ACCOUNT',
  'RATE_TICKET_MESSAGES_PER_ADDRESS',
  'RATE_TICKET_MESSAGES_PER_TICKET',
  'RECONCILE_INTERVAL_S',
  'REFERRAL_REWARD_DAYS',
  'REFRESH_TOKEN_TTL_S',
  'ROUTING_NODES_MAX',
  'SESSION_TOKEN_TTL_S',
  // The file's stop_grace_period assumes the defaults of these two.
  'SHUTDOWN_DRAIN_S',
  'SHUTDOWN_GRACE_S',
  'TELEGRAM_API_ROOT',
  'TELEGRAM_AUTH_MAX_AGE_S',
  'TON_API_URL',
  'TON_RATES_URL',
  'TRAFFIC_RESET_INTERVAL_S',
  // The image's own web/dist.
  'WEB_DIR',
  'TRAFFIC_LIMIT_DEFAULT_BYTES',
  'TRIAL_DAYS',
];

/** `NAME: value` of the `service` entry's environment in docker-compose.yml. */
function serviceEnvironment(): Map<string, string> {
  const compose = readFileSync(resolve(ROOT, 'docker-compose.yml'), 'utf8');
  const service = /^ {2}service:\n((?: {4}.*\n|\s*\n)*)/m.exec(compose)?.[1] ?? '';
  const environment = /^ {4}environment:\n((?: {6}.*\n)*)/m.exec(service)?.[1] ?? '';
  return new Map(
    [...environment.matchAll(/^ {6}([A-Z_]+): (.*)$/gm)].map(([, name, value]) => [name, value]),
  );
}

describe('docker-compose.yml', () => {
  it('passes every setting the service reads, or leaves it to the default on purpose', () => {
    const source = (file: string): string => readFileSync(resolve(ROOT, file), 'utf8');
    const read = new Set(
      [
        ...SECRET_NAMES,
        ...[...source('src/config/settings.ts').matchAll(/read\.\w+\(\s*'([A-Z_]+)'/g)],
        // Read on every request (GET /config).
        ...[...source('src/config/runtime.ts').matchAll(/process\.env\.([A-Z_]+)/g)],
      ].map((match) => (typeof match === 'string' ? match : match[1])),
    );
    const passed = serviceEnvironment();
    expect(passed.size).toBeGreaterThan(20);
    const missing = [...read].filter(
      (name) => !passed.has(name) && !LEFT_TO_DEFAULTS.includes(name),
    );
    expect(missing).toEqual([]);
    expect(LEFT_TO_DEFAULTS.filter((name) => !read.has(name) || passed.has(name))).toEqual([]);
    // Nothing passed that the service does not read (a misspelt name would be silently ignored).
    expect([...passed.keys()].filter((name) => !read.has(name))).toEqual([]);
  });

  it('stops at once, naming the setting, when a required one is unset', () => {
    const passed = serviceEnvironment();
    for (const name of REQUIRED) {
      expect([name, passed.get(name)]).toEqual([
        name,
        expect.stringMatching(new RegExp(`^'?"?\\$\\{${name}:\\?set ${name}\\b`)),
      ]);
    }
    const required = [...passed].filter(([, value]) => value.includes(':?')).map(([name]) => name);
    expect(required.sort()).toEqual([...REQUIRED].sort());
  });
});
