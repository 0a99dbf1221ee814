import {
  type Cipher,
  createCipheriv,
  createHmac,
  hkdfSync,
  randomUUID,
  timingSafeEqual,
} from 'node:crypto';
import { CANONICAL_UUID as UUID, writeUuidBytes } from '../common/uuid';

/** Marks a routing session token; an access JWT (`eyJ…`) can never start with it. */
const PREFIX = 'vst2.';
const EXPIRY = /^[1-9]\d{0,11}$/;
const BLOCK = 16;
/** A tag: 16 bytes in base64url, no padding. */
const TAG = /^[A-Za-z0-9_-]{22}$/;

export interface SessionTokenClaims {
  userId: string;
  nodeId: string;
  /** Unix seconds. */
  expiresAt: number;
  /** Unique id, as a UUID: a token validates once. */
  jti: string;
}

/** The nodes tokens are issued for, prepared once for every request that shares a node list. */
export class TokenTargets {
  /** The node ids' 16 bytes each, in order. */
  readonly blocks: Buffer;

  constructor(readonly nodeIds: readonly string[]) {
    if (!nodeIds.every((id) => UUID.test(id))) throw new TypeError('node ids must be UUIDs');
    this.blocks = Buffer.alloc(nodeIds.length * BLOCK);
    nodeIds.forEach((id, i) => writeUuidBytes(id, this.blocks, i * BLOCK));
  }
}

/**
 * One-time session tokens for the proxy:
 * `vst2.<user id>.<node id>.<expiry, unix s>.<request nonce>.<tag>`, every field URL- and JSON-safe.
 *
 * Routing issues one token per node on every request, so the MAC is built to cost two native calls
 * per request rather than one HMAC per token:
 * - `R` = HMAC-SHA-256(K1, `<user id>.<expiry>.<nonce>`), first 16 bytes, once per request (the
 *   nonce is a fresh random UUID);
 * - `tag` = AES-256(K2, R ⊕ node id), one block per node, all of a request's nodes in one call.
 *
 * R is a pseudo-random value nobody sees, and AES is a pseudo-random permutation, so a tag cannot be
 * forged for any other (user, node, expiry, nonce): a new triple gives an unknown R, and a known
 * triple with another node gives a block AES was never shown. Tags are distinct for distinct
 * tokens, so the tag (as a UUID) is the token's unique id, the one the proxy's validation records.
 * K1 and K2 are derived from PROXY_TOKEN_SECRET with HKDF. Issuing writes nothing.
 */
export class SessionTokens {
  private readonly requestKey: Buffer;
  /** ECB over independent single blocks, padding off: one long-lived cipher serves every call. */
  private readonly nodeCipher: Cipher;

  constructor(secret: string) {
    const derive = (purpose: string): Buffer =>
      Buffer.from(hkdfSync('sha256', secret, 'vst2', `routing session token: ${purpose}`, 32));
    this.requestKey = derive('request');
    this.nodeCipher = createCipheriv('aes-256-ecb', derive('node'), null).setAutoPadding(false);
  }

  /** A fresh token for each of `targets`' nodes, in their order. */
  issueAll(userId: string, targets: TokenTargets, expiresAt: number): string[] {
    const nonce = randomUUID();
    const tags = this.tags(userId, expiresAt, nonce, targets.blocks);
    const head = `${PREFIX}${userId}.`;
    const tail = `.${expiresAt}.${nonce}.`;
    return targets.nodeIds.map(
      (nodeId, i) => head + nodeId + tail + tags.toString('base64url', i * BLOCK, (i + 1) * BLOCK),
    );
  }

  issue(userId: string, nodeId: string, expiresAt: number): string {
    return this.issueAll(userId, new TokenTargets([nodeId]), expiresAt)[0];
  }

  /** The claims of a token this service signed and nobody altered; null for anything else. */
  verify(token: unknown): SessionTokenClaims | null {
    if (typeof token !== 'string' || token.length > 256 || !token.startsWith(PREFIX)) return null;
    const [userId, nodeId, expiry, nonce, tag, ...rest] = token.slice(PREFIX.length).split('.');
    if (rest.length > 0 || tag === undefined || !TAG.test(tag) || !EXPIRY.test(expiry)) return null;
    if (!UUID.test(userId) || !UUID.test(nodeId) || !UUID.test(nonce)) return null;
    const node = new TokenTargets([nodeId]).blocks;
    const expected = this.tags(userId, Number(expiry), nonce, node);
    // Compared as text: base64url's spare bits would let two spellings decode to one tag.
    const given = Buffer.from(tag, 'utf8');
    if (!timingSafeEqual(given, Buffer.from(expected.toString('base64url'), 'utf8'))) return null;
    return { userId, nodeId, expiresAt: Number(expiry), jti: asUuid(expected) };
  }

  private tags(userId: string, expiresAt: number, nonce: string, nodes: Buffer): Buffer {
    const r = createHmac('sha256', this.requestKey)
      .update(`${userId}.${expiresAt}.${nonce}`)
      .digest();
    const blocks = Buffer.allocUnsafe(nodes.length);
    for (let i = 0; i < nodes.length; i++) blocks[i] = nodes[i] ^ r[i % BLOCK];
    return this.nodeCipher.update(blocks);
  }
}

function asUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
