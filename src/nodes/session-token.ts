import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { CANONICAL_UUID as UUID } from '../common/uuid';

/** Marks a routing session token; an access JWT (`eyJ…`) can never start with it. */
const PREFIX = 'vst1.';
const EXPIRY = /^[1-9]\d{0,11}$/;

export interface SessionTokenClaims {
  userId: string;
  nodeId: string;
  /** Unix seconds. */
  expiresAt: number;
  /** Unique id: a token validates once. */
  jti: string;
}

/**
 * One-time session tokens for the proxy: `vst1.<user id>.<node id>.<expiry, unix s>.<unique id>.<mac>`,
 * the MAC an HMAC-SHA-256 (base64url) of everything before it, keyed from PROXY_TOKEN_SECRET. The
 * fields are URL-safe as they are, so issuing one is a UUID, an HMAC and a concatenation (routing
 * issues one per node per request), and writes nothing: the proxy's validation records the unique
 * id once.
 */
export class SessionTokens {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(`proxy-session-token:${secret}`, 'utf8');
  }

  issue(userId: string, nodeId: string, expiresAt: number): string {
    const body = `${PREFIX}${userId}.${nodeId}.${expiresAt}.${randomUUID()}`;
    return `${body}.${this.sign(body)}`;
  }

  /** The claims of a token this service signed and nobody altered; null for anything else. */
  verify(token: unknown): SessionTokenClaims | null {
    if (typeof token !== 'string' || token.length > 256 || !token.startsWith(PREFIX)) return null;
    const dot = token.lastIndexOf('.');
    const body = token.slice(0, dot);
    // Compared as text: base64url's spare bits would let two spellings decode to one signature.
    const given = Buffer.from(token.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.sign(body), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const [userId, nodeId, expiry, jti, ...rest] = body.slice(PREFIX.length).split('.');
    if (rest.length > 0 || !UUID.test(userId) || !UUID.test(nodeId) || !UUID.test(jti)) return null;
    if (!EXPIRY.test(expiry)) return null;
    return { userId, nodeId, expiresAt: Number(expiry), jti };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
