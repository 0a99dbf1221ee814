import { createHmac, randomBytes } from 'node:crypto';

// Crockford's base32 alphabet: no I, L, O or U, so a seed read aloud or retyped is unambiguous.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const SEED_BYTES = 20;

/** A fresh seed: 160 random bits as 32 base32 characters in dash-separated groups of four. */
export function generateSeed(): string {
  const bytes = randomBytes(SEED_BYTES);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out.match(/.{4}/g)!.join('-');
}

/** Case, dashes and spaces do not matter when a seed is typed back; i/l read as 1 and o as 0. */
export function normalizeSeed(seed: string): string {
  return seed.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
}

/** Only this keyed hash of a seed is stored. */
export function hashSeed(seed: string, pepper: string): string {
  return createHmac('sha256', pepper).update(normalizeSeed(seed)).digest('hex');
}
