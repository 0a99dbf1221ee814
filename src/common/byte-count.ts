import { type Uuid, uuidOrder } from './uuid';

/**
 * A whole number of bytes: a number while it is a safe integer, as nearly every count is, a bigint
 * past 2^53. Summing a traffic report's 10,000 entries in BigInt allocated five of them an entry
 * (2.3 MB of garbage a report); doubles are exact up to 2^53, and a sum that would go past it goes
 * on in BigInt.
 */
export type ByteCount = number | bigint;

/** The largest value of a bigint column: a traffic counter stops there. */
export const BIGINT_MAX = 9223372036854775807n;

/** Bytes to add, capped at BIGINT_MAX: a counter given that many is full either way. */
export const atMostBigintMax = <T extends ByteCount>(bytes: T): T | bigint =>
  bytes > BIGINT_MAX ? BIGINT_MAX : bytes;

/**
 * SQL: the bigint `counter` (never negative) plus the bigint `added` (at most BIGINT_MAX), stopping
 * at BIGINT_MAX, in bigint arithmetic (`BIGINT_MAX - counter` cannot overflow), as every traffic
 * counter adds.
 */
export const saturatingAddSql = (counter: string, added: string): string =>
  `CASE WHEN ${added} > ${BIGINT_MAX} - ${counter} THEN ${BIGINT_MAX} ELSE ${counter} + ${added} END`;

/** `sum + more`, exactly. */
export function addBytes(sum: ByteCount, more: ByteCount): ByteCount {
  if (typeof sum === 'number' && typeof more === 'number') {
    // Two safe integers: a total of at most 2^53 - 1 is exact, a larger one is redone in BigInt.
    const total = sum + more;
    if (total <= Number.MAX_SAFE_INTEGER) return total;
  }
  return BigInt(sum) + BigInt(more);
}

/** Byte counts by user: the users in PostgreSQL's uuid order, each once. */
export interface BytesByUser {
  ids: Uuid[];
  bytes: ByteCount[];
}

/**
 * The entries `ids[i]`, `bytes[i]` summed by id, ids in uuid order: one sort of the entries, no
 * map (10,000 ids hashed into a Map cost as much as sorting them).
 */
export function sumByUser(ids: readonly Uuid[], bytes: readonly ByteCount[]): BytesByUser {
  const summed: BytesByUser = { ids: [], bytes: [] };
  let last = -1;
  for (const i of uuidOrder(ids)) {
    if (last >= 0 && summed.ids[last] === ids[i]) {
      summed.bytes[last] = addBytes(summed.bytes[last], bytes[i]);
    } else {
      summed.ids.push(ids[i]);
      summed.bytes.push(bytes[i]);
      last++;
    }
  }
  return summed;
}
