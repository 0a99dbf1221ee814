import * as argon2 from 'argon2';
import { Limiter } from '../common/concurrency/limiter';

/** OWASP's argon2id minimum: 19 MiB, 2 passes, 1 lane. argon2 adds its own random salt per hash. */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/**
 * Each argon2 run takes its 19 MiB for as long as it lasts; fifty staff signing in at once would
 * hold that many, and leave it to the allocator afterwards. At most this many run at once; the
 * others wait their turn (a sign-in is slower under such a burst, never refused). One at a time
 * (about 30 sign-ins a second on one core): under a minute of failed sign-ins the process peaked at
 * 239 MiB with two at once and 215 MiB with one (bench/RESULTS.md, issue 21).
 */
export const ARGON2_AT_ONCE = 1;
const argon2Slots = new Limiter(ARGON2_AT_ONCE);

export function hashPassword(password: string): Promise<string> {
  return argon2Slots.run(() => argon2.hash(password, ARGON2_OPTIONS));
}

// Verified against when the username is unknown, so both failures take about as long.
let dummyHash: Promise<string> | undefined;

/** True when `password` matches; with no stored hash it still spends the time of a check. */
export async function verifyPassword(
  storedHash: string | null,
  password: string,
): Promise<boolean> {
  if (storedHash === null) {
    dummyHash ??= hashPassword('dummy password that never matches');
    const hash = await dummyHash;
    await argon2Slots.run(() => argon2.verify(hash, password)).catch(() => false);
    return false;
  }
  return argon2Slots.run(() => argon2.verify(storedHash, password)).catch(() => false);
}

/** True when the hash was made with other parameters than today's, and should be redone. */
export function needsRehash(storedHash: string): boolean {
  return argon2.needsRehash(storedHash, ARGON2_OPTIONS);
}
