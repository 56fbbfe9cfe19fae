import { app } from 'electron';

import { setupAppLog } from './app-log.js';
import { setupAppServer } from './app-server.js';
import { setupLifecycle } from './lifecycle.js';
import { setupPanelWindow } from './panel-window.js';
import { setupSingleInstance } from './single-instance.js';
import { setupTray } from './tray.js';

// The desktop app. Nothing here awaits `whenReady` at the top level: an ES module entry
// must finish evaluating before Electron emits `ready`.
setupLifecycle();
if (setupSingleInstance()) {
  app
    .whenReady()
    .then(async () => {
      const log = setupAppLog();
      const server = await setupAppServer(log);
      const panel = setupPanelWindow(server.adminUrl, log);
      setupTray(server, panel);
      panel.open();
    })
    .catch((err: unknown) => {
      console.error(err);
      app.exit(1);
    });
}
