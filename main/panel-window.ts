import path from 'node:path';

import { app, BrowserWindow, session, shell, type WebContents, type WebPreferences } from 'electron';

import type { Logger } from '../server/logger.js';
import { isPanelNavigation, isPanelOrigin, panelOrigin, popupDecision } from './panel-navigation.js';
import { PRODUCT_NAME } from './tray-state.js';

export interface PanelWindow {
  /** Shows the control panel, creating its window if it was closed. */
  open(): void;
}

/** Renderer settings for every window showing the panel: no Node, no preload, sandboxed. */
const PANEL_PREFERENCES: WebPreferences = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInSubFrames: false,
  webviewTag: false,
  navigateOnDragDrop: false,
};

/**
 * The control panel window. It loads the server's admin address (the token travels in the
 * fragment and the page trades it for an HttpOnly cookie), may navigate only within the
 * panel, opens other sites in the system browser, and is reopened by a second launch of the
 * app or a click on the macOS dock icon. The panel is an ordinary web app on the admin API,
 * so the window needs no preload and no IPC.
 */
export function setupPanelWindow(adminUrl: string, log: Logger): PanelWindow {
  const origin = panelOrigin(adminUrl);
  allowOnlyClipboardWrites(origin);
  let window: BrowserWindow | null = null;

  const open = () => {
    if (window && !window.isDestroyed()) {
      if (window.isMinimized()) window.restore();
      window.show();
      window.focus();
      return;
    }
    const created = new BrowserWindow({
      width: 1280,
      height: 860,
      minWidth: 720,
      minHeight: 520,
      title: PRODUCT_NAME,
      icon: path.join(app.getAppPath(), 'build', 'icon.png'),
      show: false,
      autoHideMenuBar: true,
      backgroundColor: '#ffffff',
      webPreferences: PANEL_PREFERENCES,
    });
    window = created;
    lockDown(created.webContents, origin, (url) => isPanelNavigation(url, origin));
    created.once('ready-to-show', () => created.show());
    created.on('closed', () => {
      if (window === created) window = null;
    });
    created.loadURL(adminUrl).catch((err: unknown) => log.warn({ component: 'panel', err }, 'the control panel did not load'));
  };

  app.on('second-instance', open);
  app.on('activate', open);
  return { open };
}

/**
 * Keeps a panel window's page where it belongs: navigation limited by `mayNavigate`, other
 * http(s) links handed to the system browser, same-origin pop-ups (a screenshot, a page's
 * HTML) in a child window that is locked down the same way, every other pop-up refused.
 */
function lockDown(contents: WebContents, origin: string, mayNavigate: (url: string) => boolean): void {
  const refuse = (event: { url: string; preventDefault(): void }) => {
    if (mayNavigate(event.url)) return;
    event.preventDefault();
    if (popupDecision(event.url, origin) === 'system-browser') void shell.openExternal(event.url);
  };
  contents.on('will-navigate', refuse);
  contents.on('will-redirect', refuse);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    switch (popupDecision(url, origin)) {
      case 'child-window':
        return {
          action: 'allow',
          overrideBrowserWindowOptions: { autoHideMenuBar: true, webPreferences: PANEL_PREFERENCES },
        };
      case 'system-browser':
        void shell.openExternal(url);
        return { action: 'deny' };
      case 'deny':
        return { action: 'deny' };
    }
  });
  contents.on('did-create-window', (child) => lockDown(child.webContents, origin, (url) => isPanelOrigin(url, origin)));
}

/**
 * The panel's copy buttons need clipboard writes; nothing else (camera, notifications,
 * geolocation...) is granted, and nothing at all to another origin. The panel uses the
 * default session, which no captured page ever shares.
 */
function allowOnlyClipboardWrites(origin: string): void {
  session.defaultSession.setPermissionRequestHandler((_contents, permission, callback, details) =>
    callback(permission === 'clipboard-sanitized-write' && isPanelOrigin(details.requestingUrl, origin)),
  );
  session.defaultSession.setPermissionCheckHandler(
    (_contents, permission, requestingOrigin) =>
      permission === 'clipboard-sanitized-write' && isPanelOrigin(requestingOrigin, origin),
  );
}
