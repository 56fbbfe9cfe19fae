import { afterAll, beforeAll } from 'vitest';

/**
 * Starts something (a server, a fixture) before the cases of the file or block that calls this,
 * and stops it after them. The object returned stands for what was started: reading it before
 * the start throws; reads, writes and method calls go to the started object.
 */
export function forFile<T extends object>(start: () => Promise<T>, stop: (started: T) => Promise<unknown>): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    if (started) await stop(started);
  });
  const get = (prop: string | symbol): T => {
    if (!started) throw new Error(`not started yet (using ${String(prop)}): use it in a case or a hook`);
    return started;
  };
  return new Proxy({} as T, {
    get(_, prop) {
      const value: unknown = Reflect.get(get(prop), prop);
      return typeof value === 'function' ? value.bind(started) : value;
    },
    set: (_, prop, value) => Reflect.set(get(prop), prop, value),
  });
}
