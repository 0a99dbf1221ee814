import { ByteBudget } from './byte-budget';

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('ByteBudget', () => {
  it('admits within the capacity, then in arrival order as bytes are given back', async () => {
    const budget = new ByteBudget(10);
    const admitted: string[] = [];
    const take = (name: string, bytes: number) =>
      budget.acquire(bytes).then((release) => {
        admitted.push(name);
        return release;
      });
    const a = take('a', 6);
    const b = take('b', 4);
    const c = take('c', 5);
    // Small enough to fit after a, but c came first: nothing overtakes.
    const d = take('d', 1);
    await settled();
    expect(admitted).toEqual(['a', 'b']);
    expect(budget.inUse).toBe(10);

    (await b)();
    await settled();
    expect(admitted).toEqual(['a', 'b']);
    (await a)();
    await settled();
    expect(admitted).toEqual(['a', 'b', 'c', 'd']);
    expect(budget.inUse).toBe(6);
    const releaseC = await c;
    releaseC();
    releaseC(); // a second call gives back nothing more
    (await d)();
    expect(budget.inUse).toBe(0);
  });

  it('admits one piece larger than the capacity alone', async () => {
    const budget = new ByteBudget(10);
    const big = await budget.acquire(25);
    let small = false;
    const waiting = budget.acquire(1).then((release) => {
      small = true;
      return release;
    });
    await settled();
    expect(small).toBe(false);
    big();
    (await waiting)();
    expect(small).toBe(true);
    expect(budget.inUse).toBe(0);
  });
});
