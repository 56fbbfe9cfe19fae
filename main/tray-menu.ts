import type { MenuItemConstructorOptions } from 'electron';

import type { TrayState } from './tray-state.js';

/** What the tray menu's items do; tray.ts wires them to the window, the queue and the app. */
export interface TrayActions {
  openPanel(): void;
  pause(): void;
  resume(): void;
  copyApiAddress(): void;
  quit(): void;
}

/** The tray menu for a state: status line, control panel, pause/resume, API address, quit. */
export function trayMenuTemplate(state: TrayState, actions: TrayActions): MenuItemConstructorOptions[] {
  return [
    { label: state.label, enabled: false },
    { type: 'separator' },
    { label: 'Open Control Panel', click: () => actions.openPanel() },
    state.paused
      ? { label: 'Resume Queue', click: () => actions.resume() }
      : { label: 'Pause Queue', click: () => actions.pause() },
    { label: 'Copy API Address', click: () => actions.copyApiAddress() },
    { type: 'separator' },
    { label: 'Quit Screenshot Appliance', click: () => actions.quit() },
  ];
}

/**
 * The v1 API's base address ({base_url} in the specification, which includes `/v1`): the
 * configured public base URL when the admin set one (what LAN clients must use), otherwise
 * the server's own address.
 */
export function apiAddressFor(publicBaseUrl: string | null | undefined, serverUrl: string): string {
  return `${(publicBaseUrl || serverUrl).replace(/\/+$/, '')}/v1`;
}
