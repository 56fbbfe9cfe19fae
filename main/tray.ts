import path from 'node:path';

import { app, clipboard, Menu, type NativeImage, nativeImage, Tray } from 'electron';

import type { RunningServer } from '../server/server.js';
import type { PanelWindow } from './panel-window.js';
import { apiAddressFor, type TrayActions, trayMenuTemplate } from './tray-menu.js';
import { type TrayIconName, trayStateFor } from './tray-state.js';

/** Queue changes come in bursts (every job start and end); the tray redraws at most this often. */
const REDRAW_DELAY_MS = 150;

/**
 * The tray icon: its picture and tooltip show the queue (idle, capturing N, paused) and its
 * menu opens the control panel, pauses or resumes the queue, copies the API address and quits.
 */
export function setupTray(server: RunningServer, panel: PanelWindow): Tray {
  const { queue, settings } = server.services;
  const icons = loadTrayIcons();
  const tray = new Tray(icons.idle);

  let shown = '';
  const redraw = () => {
    if (tray.isDestroyed()) return;
    const state = trayStateFor(queue.stats());
    const key = `${state.icon}|${state.label}`;
    if (key === shown) return;
    shown = key;
    tray.setImage(icons[state.icon]);
    tray.setToolTip(state.tooltip);
    tray.setContextMenu(Menu.buildFromTemplate(trayMenuTemplate(state, actions)));
  };
  let pending: NodeJS.Timeout | undefined;
  const scheduleRedraw = () => {
    pending ??= setTimeout(() => {
      pending = undefined;
      redraw();
    }, REDRAW_DELAY_MS);
  };

  const actions: TrayActions = {
    openPanel: () => panel.open(),
    pause: () => queue.pause(),
    resume: () => queue.resume(),
    copyApiAddress: () => clipboard.writeText(apiAddressFor(settings.get().public_base_url, server.url)),
    quit: () => app.quit(),
  };

  const unsubscribe = queue.onChange(scheduleRedraw);
  // macOS shows the menu on click; elsewhere a click means "show me the app".
  if (process.platform !== 'darwin') tray.on('click', () => panel.open());
  app.once('will-quit', () => {
    unsubscribe();
    clearTimeout(pending);
    tray.destroy();
  });
  redraw();
  return tray;
}

/** The tray pictures; nativeImage picks up the `@2x` files next to them on HiDPI screens. */
function loadTrayIcons(): Record<TrayIconName, NativeImage> {
  // build/tray is listed in electron-builder.yml's files, so it is inside the package too.
  const dir = path.join(app.getAppPath(), 'build', 'tray');
  const load = (name: TrayIconName) => nativeImage.createFromPath(path.join(dir, `${name}.png`));
  return { idle: load('idle'), capturing: load('capturing'), paused: load('paused') };
}
