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
