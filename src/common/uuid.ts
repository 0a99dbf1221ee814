/** A UUID as PostgreSQL and `randomUUID()` write it: lower-case, with dashes. */
export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
