import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in time that does not depend on where they differ. */
export function secretsEqual(given: string | Buffer, expected: string | Buffer): boolean {
  // Hashing first gives equal lengths, so the length of the expected secret does not leak either.
  return timingSafeEqual(sha256(given), sha256(expected));
}

export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}

/** A random token, base64url, from `bytes` random bytes. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
