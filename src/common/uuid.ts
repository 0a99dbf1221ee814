/** A UUID as PostgreSQL and `randomUUID()` write it: lower-case, with dashes. */
export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

declare const canonical: unique symbol;

/**
 * A string known to be a canonical UUID: checked where it entered (`canonicalUuid`), so code
 * further in, such as binary array parameters, need not check each one again.
 */
export type Uuid = string & { readonly [canonical]: true };

/** The canonical form of a UUID written in either case, or undefined when it is not one. */
export function canonicalUuid(value: string): Uuid | undefined {
  const lower = value.toLowerCase();
  return CANONICAL_UUID.test(lower) ? (lower as Uuid) : undefined;
}

/** Value of each lower-case hex digit by character code (0 for any other character). */
const HEX_DIGIT = new Uint8Array(128);
for (let digit = 0; digit < 16; digit++) HEX_DIGIT['0123456789abcdef'.charCodeAt(digit)] = digit;

/** Offsets in a canonical UUID of the first of each pair of hex digits (the dashes skipped). */
const HEX_PAIRS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * Writes the 16 bytes of canonical UUID `id` into `target` at `at`. The caller has checked `id`
 * (a `Uuid`, or a match of CANONICAL_UUID): other characters would be written as zeros.
 */
export function writeUuidBytes(id: string, target: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++) {
    const pair = HEX_PAIRS[i];
    target[at + i] = (HEX_DIGIT[id.charCodeAt(pair)] << 4) | HEX_DIGIT[id.charCodeAt(pair + 1)];
  }
}

/**
 * The ids in PostgreSQL's uuid order, which is the code-unit order of canonical (lower-case) ids:
 * a plain string sort. Only for `Uuid` values: upper-case digits would be misplaced.
 */
export function sortedUuids(ids: readonly Uuid[]): Uuid[] {
  return [...ids].sort();
}

/** The ids after `after` up to and including `upTo`, in PostgreSQL's uuid order. */
export interface UuidRange {
  after: string;
  upTo: string;
}

const UUID_SPACE = 1n << 128n;

const uuidOf = (value: bigint): string => {
  const hex = value.toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** Every id but the nil UUID, which no row is given. */
export const WHOLE_UUID_RANGE: UuidRange = {
  after: uuidOf(0n),
  upTo: uuidOf(UUID_SPACE - 1n),
};

/**
 * The uuid space cut into `parts` ranges of equal width, highest first. Random (version 4) ids
 * fall evenly into them.
 */
export function uuidRangesDescending(parts: number): UuidRange[] {
  const count = BigInt(Math.max(1, Math.floor(parts)));
  const ranges: UuidRange[] = [];
  for (let i = count - 1n; i >= 0n; i--) {
    const after = i === 0n ? 0n : (UUID_SPACE * i) / count - 1n;
    const upTo = (UUID_SPACE * (i + 1n)) / count - 1n;
    ranges.push({ after: uuidOf(after), upTo: uuidOf(upTo) });
  }
  return ranges;
}
