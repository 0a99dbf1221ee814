import { createHmac, hkdfSync } from 'node:crypto';
import { sha256 } from '../common/secrets';

/** A link token: 24 bytes (192 bits) of HMAC, 32 base64url characters. */
const TOKEN_BYTES = 24;
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

/**
 * Subscription-link tokens. A token is derived, not stored: HMAC-SHA-256 under a key derived from
 * SEED_PEPPER (a secret that never rotates, since seed hashes depend on it) of the account and
 * the link's version, or of the device for a device's own link. So the owner's page can show the
 * link again while the database keeps only each token's SHA-256, found with one indexed read;
 * rotating the account's link moves its version, and the old token then matches no row.
 */
export class LinkTokens {
  private readonly key: Buffer;

  constructor(pepper: string) {
    this.key = Buffer.from(hkdfSync('sha256', pepper, 'sub', 'subscription link tokens', 32));
  }

  /** The account's link token at `version`. */
  account(userId: string, version: number): string {
    return this.token(`account:${userId}:${version}`);
  }

  /** The token of a device's own link. */
  device(deviceId: string): string {
    return this.token(`device:${deviceId}`);
  }

  private token(subject: string): string {
    return createHmac('sha256', this.key)
      .update(subject)
      .digest()
      .subarray(0, TOKEN_BYTES)
      .toString('base64url');
  }
}

/** The SHA-256 a token is looked up by; null for text that cannot be a token. */
export function tokenHash(token: string): Buffer | null {
  return TOKEN.test(token) ? sha256(token) : null;
}
