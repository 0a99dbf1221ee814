import { SecretBox, UnopenableSecret } from './secret-box';

describe('SecretBox (AES-256-GCM at rest)', () => {
  const box = new SecretBox('a-data-encryption-key-of-at-least-32-chars');

  it('opens what it sealed; each sealing has its own nonce', () => {
    const a = box.seal('the secret');
    const b = box.seal('the secret');
    expect(a).not.toBe(b);
    expect(a).not.toContain('the secret');
    expect(box.open(a)).toBe('the secret');
    expect(box.open(b)).toBe('the secret');
  });

  it('names the key that sealed it', () => {
    const [version, keyId] = box.seal('x').split('.');
    expect(version).toBe('v1');
    expect(keyId).toMatch(/^[\w-]{8}$/);
    expect(
      new SecretBox('a-data-encryption-key-of-at-least-32-chars').seal('x').split('.')[1],
    ).toBe(keyId);
  });

  it('refuses an altered value and one sealed under another key', () => {
    const sealed = box.seal('the secret');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 1;
    parts[3] = body.toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox('another-key-0123456789-0123456789').open(sealed)).toThrow();
    expect(() => box.open('garbage')).toThrow();
  });

  it('after a key change, opens values under the previous keys and seals under the new one', () => {
    const oldValue = box.seal('the secret');
    const rotated = new SecretBox('the-next-data-encryption-key-0123456789', [
      'a-data-encryption-key-of-at-least-32-chars',
    ]);
    expect(rotated.open(oldValue)).toBe('the secret');
    expect(rotated.isCurrent(oldValue)).toBe(false);
    const resealed = rotated.seal(rotated.open(oldValue));
    expect(rotated.isCurrent(resealed)).toBe(true);
    expect(() => box.open(resealed)).toThrow(UnopenableSecret);
  });
});
