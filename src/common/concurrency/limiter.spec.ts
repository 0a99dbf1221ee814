import { Limiter } from './limiter';

const tick = () => new Promise((done) => setImmediate(done));

describe('Limiter', () => {
  it('runs at most its slots at once, the rest in arrival order, and every task finishes', async () => {
    const limiter = new Limiter(2);
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        limiter.run(async () => {
          started.push(i);
          inFlight++;
          most = Math.max(most, inFlight);
          await tick();
          inFlight--;
          return i * 10;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(results).toEqual([0, 10, 20, 30, 40, 50, 60]);
  });

  it('a failing task gives its slot back', async () => {
    const limiter = new Limiter(1);
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(() => Promise.resolve('next'))).resolves.toBe('next');
  });
});
