/**
 * The share of the nodes a user connects through is chosen per bucket of users, not per user, so
 * that the users a node carries are found through an index (`devices.share_bucket`) instead of a
 * scan of every user: 4,096 buckets, each a 12-bit slice of the user id (random in a v4 UUID).
 * SQL has the same rule in `share_bucket_of(uuid)` (migration 0021), and a CHECK holds every
 * device row to it; test/devices-share.e2e-spec.ts compares the two forms.
 */
export const SHARE_BUCKETS = 4096;

/** The bucket of a canonical (lower-case) user id: its first three hex digits. */
export function shareBucket(userId: string): number {
  return parseInt(userId.slice(0, 3), 16);
}
