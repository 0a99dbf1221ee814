import { deleteInBatches } from './delete-in-batches';

/** A table of `rows` rows whose every delete statement takes `statementMs`; what it saw. */
function table(rows: number, statementMs: number) {
  let left = rows;
  const statements: { startedAt: number; endedAt: number }[] = [];
  const deleteBatch = async (batch: number): Promise<number> => {
    const startedAt = performance.now();
    await new Promise((done) => setTimeout(done, statementMs));
    const count = Math.min(batch, left);
    left -= count;
    statements.push({ startedAt, endedAt: performance.now() });
    return count;
  };
  return { deleteBatch, statements, left: () => left };
}

describe('deleteInBatches', () => {
  it('deletes batch by batch until one comes back short, resting between statements as long as the last took', async () => {
    const rows = table(25, 30);
    expect(await deleteInBatches(rows.deleteBatch, { batch: 10 })).toBe(25);
    expect(rows.left()).toBe(0);
    expect(rows.statements).toHaveLength(3);
    for (let i = 1; i < rows.statements.length; i++) {
      const before = rows.statements[i - 1];
      const took = before.endedAt - before.startedAt;
      // Timers fire at most about a millisecond early.
      expect(rows.statements[i].startedAt - before.endedAt).toBeGreaterThanOrEqual(took - 2);
    }
  });

  it('stops at its bound of statements, and at once when told to stop, even while it rests', async () => {
    const bounded = table(100, 1);
    expect(await deleteInBatches(bounded.deleteBatch, { batch: 10, maxBatches: 3 })).toBe(30);
    expect(bounded.statements).toHaveLength(3);

    const stopped = table(100, 200);
    const stop = new AbortController();
    const started = performance.now();
    const done = deleteInBatches(stopped.deleteBatch, { batch: 10, signal: stop.signal });
    // The first statement ends at about 200 ms; its rest would last about as long again.
    setTimeout(() => stop.abort(), 250);
    expect(await done).toBe(10);
    expect(stopped.statements).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(350);
  });
});
