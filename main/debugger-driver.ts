import type { Debugger } from 'electron';

import type { PageDriver } from '../server/capture/pipeline/page-driver.js';

/**
 * A window's `webContents.debugger` as the capture pipeline's PageDriver: commands as they are,
 * and its one stream of `message` events handed out by method name. The debugger must be attached.
 */
export function debuggerDriver(debug: Debugger): PageDriver {
  const handlers = new Map<string, Set<(params: never) => void>>();
  debug.on('message', (_event, method, params, sessionId) => {
    // Only the page's own session: nothing here attaches to its workers or frames.
    if (sessionId) return;
    for (const handler of [...(handlers.get(method) ?? [])]) handler(params as never);
  });
  return {
    send: (method, params) => debug.sendCommand(method, params) as never,
    on(event, handler) {
      const set = handlers.get(event) ?? new Set();
      set.add(handler as never);
      handlers.set(event, set);
    },
    off(event, handler) {
      handlers.get(event)?.delete(handler as never);
    },
  };
}
