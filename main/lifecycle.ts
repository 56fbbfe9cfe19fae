import path from 'node:path';

import { app } from 'electron';

import { PRODUCT_NAME } from './tray-state.js';

/** Must match `appId` in electron-builder.yml (Windows groups taskbar entries by it). */
export const APP_ID = 'net.screenshot-appliance.app';

/**
 * Process-wide settings and lifecycle, before the app is ready. The data directory is named
 * after the product, the same in development (`npm start`) and in an installed app.
 */
export function setupLifecycle(): void {
  app.setName(PRODUCT_NAME);
  // Set before the single-instance lock, which lives in userData too.
  app.setPath('userData', path.join(app.getPath('appData'), PRODUCT_NAME));
  if (process.platform === 'win32') app.setAppUserModelId(APP_ID);
  // Captured pages reach the web only through the egress proxy, which speaks TCP; QUIC would not be proxied.
  app.commandLine.appendSwitch('disable-quic');

  // A tray app: closing the control panel (or a capture's hidden window) leaves the service
  // running; Quit is in the tray menu.
  app.on('window-all-closed', () => undefined);
  // Ctrl-C in the terminal that ran `npm start` shuts down as gracefully as the tray's Quit.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
}
