/**
 * Runs `work` over `items` with at most `limit` running at once, and settles every item: answers
 * the errors of those that failed (empty when all succeeded). One core call at a time would take
 * seconds for thousands of users; all at once would queue thousands of streams on one connection.
 */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<unknown[]> {
  const errors: unknown[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      try {
        await work(item);
      } catch (error) {
        errors.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return errors;
}
