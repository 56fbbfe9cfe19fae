import path from 'node:path';

import { app, dialog } from 'electron';

import { type Config, loadConfig } from '../server/config.js';
import { withDeadline } from '../server/deadline.js';
import type { Logger } from '../server/logger.js';
import { type RunningServer, startServer } from '../server/server.js';
import { ElectronEngine } from './electron-engine.js';
import { PRODUCT_NAME } from './tray-state.js';

/** Longest graceful shutdown (running captures finish or are re-queued, stores flushed). */
const SHUTDOWN_TIMEOUT_MS = 20_000;

/**
 * Starts the same services as the headless server, capturing with an ElectronEngine and
 * keeping its data in `<userData>/data`. Other settings come from the SCREENSHOT_* variables
 * as for the headless server. Quitting the app closes the server first. If the server cannot
 * start (port taken, data directory in use) the user is told why and the app exits.
 */
export async function setupAppServer(log: Logger): Promise<RunningServer> {
  const config = loadConfig(process.env, { dataDir: path.join(app.getPath('userData'), 'data') });
  let running: RunningServer;
  try {
    running = await startServer(config, {
      engine: ({ proxyServer, trustedCertificates }) => new ElectronEngine({ proxyServer, trustedCertificates, log: log.child({ component: 'capture' }) }),
      log,
    });
  } catch (err) {
    log.error({ err }, 'could not start');
    dialog.showErrorBox(`${PRODUCT_NAME} could not start`, startFailure(err, config));
    app.exit(1);
    throw err;
  }
  log.info(`${PRODUCT_NAME} listening on ${running.url} (data in ${config.dataDir})`);

  let state: 'running' | 'stopping' | 'stopped' = 'running';
  app.on('before-quit', (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    log.info('shutting down');
    withDeadline(running.close(), SHUTDOWN_TIMEOUT_MS, () => new Error('the server did not stop in time'))
      .catch((err: unknown) => log.error({ err }, 'shutting down failed'))
      .finally(() => {
        state = 'stopped';
        app.quit();
      });
  });
  return running;
}

/** What the start-up error box says: the cause in the user's terms and what to do. */
function startFailure(err: unknown, config: Readonly<Config>): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EADDRINUSE') {
    return (
      `Port ${config.port} on ${config.host} is already in use by another program. ` +
      'Stop that program, or start the app with SCREENSHOT_PORT set to a free port.'
    );
  }
  if (code === 'EACCES' && (err as NodeJS.ErrnoException).syscall === 'listen') {
    return `This user may not listen on port ${config.port}. Start the app with SCREENSHOT_PORT set to a port above 1024.`;
  }
  // The data-lock and configuration errors are written for people already.
  return (err as Error)?.message ?? String(err);
}
