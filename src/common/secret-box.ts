import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const NONCE_BYTES = 12;

/**
 * Seals values at rest with AES-256-GCM under a key derived from DATA_ENCRYPTION_KEY. Each sealed
 * value carries the id of the key that sealed it and a random nonce of its own, so a second key
 * can be added later and old values still opened. Format: `v1.<key id>.<nonce>.<ciphertext>.<tag>`
 * (base64url parts).
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  private readonly currentId: string;

  constructor(secret: string) {
    const key = createHash('sha256').update(`data-encryption:${secret}`, 'utf8').digest();
    this.currentId = createHash('sha256').update(key).digest('base64url').slice(0, 8);
    this.keys.set(this.currentId, key);
  }

  seal(plain: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentId)!, nonce);
    cipher.setAAD(Buffer.from(`${VERSION}.${this.currentId}`));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [
      VERSION,
      this.currentId,
      nonce.toString('base64url'),
      body.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  /** Throws when the value was not sealed by a known key or has been altered. */
  open(sealed: string): string {
    const [version, keyId, nonce, body, tag, ...rest] = sealed.split('.');
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    if (version !== VERSION || !key || tag === undefined || rest.length > 0) {
      throw new Error('sealed value in an unknown format or under an unknown key');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(`${VERSION}.${keyId}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}
