import { randomBytes } from 'node:crypto';
import { hashPassword } from '../../src/auth/passwords';
import { generateSeed, hashSeed } from '../../src/auth/seeds';
import { type IssuedSession, SessionsService } from '../../src/auth/sessions.service';
import { type Role, User } from '../../src/users/entities/user.entity';
import { TRUSTED_ORIGIN, type TestApp } from './app';

export type Kind = 'seed' | 'telegram' | Role;

export interface TestUser {
  user: User;
  session: IssuedSession;
  /** Only for staff: the password it was created with. */
  password?: string;
  seed?: string;
  /** A `Cookie` header carrying the session's access and refresh cookies. */
  cookie: string;
  /** Headers of a cookie-authenticated call from the trusted origin. */
  cookieHeaders: Record<string, string>;
  /** Headers of a Bearer-authenticated call. */
  bearer: Record<string, string>;
}

let counter = 0;

/**
 * Creates an account of the given kind through the real repositories and signs it in through the
 * real session service. Staff get a known password; `overrides` set any other column.
 */
export async function newUser(
  t: TestApp,
  kind: Kind = 'seed',
  overrides: Partial<User> = {},
): Promise<TestUser> {
  const repo = t.dataSource.getRepository(User);
  counter += 1;
  const suffix = `${process.pid}${counter}${randomBytes(2).toString('hex')}`;
  let password: string | undefined;
  let seed: string | undefined;
  const fields: Partial<User> = {};
  if (kind === 'seed') {
    seed = generateSeed();
    fields.seedHash = hashSeed(seed, t.settings.seedPepper);
  } else if (kind === 'telegram') {
    fields.tgId = String(1_000_000 + Math.floor(Math.random() * 1e9));
  } else {
    password = `pw-${suffix}-long-enough`;
    fields.username = `${kind}_${suffix}`.slice(0, 32);
    fields.passwordHash = await hashPassword(password);
    fields.role = kind;
    if (kind === 'partner') {
      fields.partnerCode = `p${suffix}`;
      fields.commissionPercent = '10.00';
    }
  }
  const user = await repo.save(repo.create({ ...fields, ...overrides }));
  const session = await t.app.get(SessionsService).start(user);
  const cookie = `access_token=${session.accessToken}; refresh_token=${session.refreshToken}`;
  return {
    user,
    session,
    password,
    seed,
    cookie,
    cookieHeaders: { Cookie: cookie, Origin: TRUSTED_ORIGIN },
    bearer: { Authorization: `Bearer ${session.accessToken}` },
  };
}

/** Parses `Set-Cookie` headers into name → { value, attributes (lower-case keys) }. */
export function parseSetCookies(
  header: string[] | string | undefined,
): Record<string, { value: string; attributes: Record<string, string | true> }> {
  const list = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const cookies: Record<string, { value: string; attributes: Record<string, string | true> }> = {};
  for (const line of list) {
    const [pair, ...attributeParts] = line.split(';').map((p) => p.trim());
    const index = pair.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const part of attributeParts) {
      const eq = part.indexOf('=');
      if (eq === -1) attributes[part.toLowerCase()] = true;
      else attributes[part.slice(0, eq).toLowerCase()] = part.slice(eq + 1);
    }
    cookies[pair.slice(0, index)] = {
      value: decodeURIComponent(pair.slice(index + 1)),
      attributes,
    };
  }
  return cookies;
}

/** What a plan saved by `savePlan` differs in; the rest is a 30-day plan on sale for 4.99 USD. */
export interface PlanFields {
  traffic_limit_bytes?: number;
  prices?: Record<string, string>;
}

/** Saves the plan `monthly` (or `name`) through the staff route, as `owner`. */
export async function savePlan(
  t: TestApp,
  owner: TestUser,
  fields: PlanFields = {},
  name = 'monthly',
): Promise<void> {
  await t
    .http()
    .put(`/api/v1/admin/plans/${name}`)
    .set(owner.bearer)
    .send({
      duration_days: 30,
      traffic_limit_bytes: fields.traffic_limit_bytes ?? 107374182400,
      prices: fields.prices ?? { USD: '499' },
      active: true,
    })
    .expect(200);
}
