import { setTimeout as pause } from 'node:timers/promises';

/**
 * Spies on `object[method]` and makes each call take `ms` longer before doing its real work, as on
 * a busy database, so that concurrent requests arrive while one call runs. The spy counts the
 * calls; `mockRestore()` it after.
 */
export function slowedDown<T extends object, M extends keyof T & string>(
  object: T,
  method: M,
  ms = 50,
): jest.SpyInstance {
  const original = (object[method] as (...args: unknown[]) => unknown).bind(object);
  return (jest.spyOn(object, method as never) as jest.SpyInstance).mockImplementation(
    async (...args: unknown[]) => {
      await pause(ms);
      return original(...args);
    },
  );
}
