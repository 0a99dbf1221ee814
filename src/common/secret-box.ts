import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** A sealed value that no known key opens, or that was altered. */
export class UnopenableSecret extends Error {}
const NONCE_BYTES = 12;

/**
 * Seals values at rest with AES-256-GCM under a key derived from DATA_ENCRYPTION_KEY. Each sealed
 * value carries the id of the key that sealed it and a random nonce of its own, so after a key
 * change values sealed under the previous keys (DATA_ENCRYPTION_KEY_PREVIOUS) still open until they
 * are resealed (`--reseal-secrets`). Format: `v1.<key id>.<nonce>.<ciphertext>.<tag>` (base64url
 * parts).
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  private readonly currentId: string;

  constructor(secret: string, previous: readonly string[] = []) {
    this.currentId = this.addKey(secret);
    for (const old of previous) this.addKey(old);
  }

  private addKey(secret: string): string {
    const key = createHash('sha256').update(`data-encryption:${secret}`, 'utf8').digest();
    const id = createHash('sha256').update(key).digest('base64url').slice(0, 8);
    if (!this.keys.has(id)) this.keys.set(id, key);
    return id;
  }

  /** Whether `sealed` is under the current key (else resealing it moves it there). */
  isCurrent(sealed: string): boolean {
    return sealed.split('.')[1] === this.currentId;
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

  /** Throws UnopenableSecret when the value was not sealed by a known key or has been altered. */
  open(sealed: string): string {
    const [version, keyId, nonce, body, tag, ...rest] = sealed.split('.');
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    if (version !== VERSION || !key || tag === undefined || rest.length > 0) {
      throw new UnopenableSecret('sealed value in an unknown format or under an unknown key');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(`${VERSION}.${keyId}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([
        decipher.update(Buffer.from(body, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new UnopenableSecret('sealed value altered');
    }
  }
}

/** The SecretBox of DATA_ENCRYPTION_KEY (and the previous keys), as a module provides it. */
export const secretBoxFactory = (settings: {
  dataEncryptionKey: string;
  dataEncryptionKeyPrevious: readonly string[];
}): SecretBox => new SecretBox(settings.dataEncryptionKey, settings.dataEncryptionKeyPrevious);
