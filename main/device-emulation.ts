import type { Parameters as EmulationParameters, WebContents } from 'electron';

import type { Preset } from '../server/capture/presets.js';

export interface Viewport {
  width: number;
  height: number;
}

/** `webContents.enableDeviceEmulation` parameters for a preset at a viewport (CSS pixels). */
export function emulationParameters(preset: Preset, viewport: Viewport): EmulationParameters {
  return {
    screenPosition: preset.isMobile ? 'mobile' : 'desktop',
    screenSize: { width: viewport.width, height: viewport.height },
    viewPosition: { x: 0, y: 0 },
    deviceScaleFactor: preset.deviceScaleFactor,
    viewSize: { width: viewport.width, height: viewport.height },
    scale: 1,
  };
}

/**
 * Makes the page see the preset's device: viewport, device pixel ratio, mobile viewport rules,
 * touch and the user agent. The window's content size already equals the viewport; this adds
 * the rest. Call it before the first navigation; the debugger must be attached. The user agent
 * goes through the debugger too, since the pipeline navigates with it (Page.navigate), not
 * with `loadURL`, which could carry one.
 *
 * `enableDeviceEmulation` is applied when each main-frame navigation commits: it lives on the
 * renderer's widget, which a fresh window does not have yet and which a cross-site redirect
 * replaces. The debugger gets the same device first. Chromium re-applies the debugger's
 * setting to every new renderer before the page runs a script, and the debugger's full-page
 * capture scales from it. Without it, that capture would render at the display's scale
 * factor instead of the preset's 2× or 3×.
 */
export async function emulateDevice(contents: WebContents, preset: Preset, viewport: Viewport, userAgent: string): Promise<void> {
  await contents.debugger.sendCommand('Emulation.setUserAgentOverride', { userAgent });
  await contents.debugger.sendCommand('Emulation.setDeviceMetricsOverride', {
    width: viewport.width,
    height: viewport.height,
    deviceScaleFactor: preset.deviceScaleFactor,
    mobile: preset.isMobile,
    screenWidth: viewport.width,
    screenHeight: viewport.height,
  });
  // Electron has no touch setting of its own.
  if (preset.hasTouch) {
    await contents.debugger.sendCommand('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
  }
  const params = emulationParameters(preset, viewport);
  contents.on('did-navigate', () => {
    if (!contents.isDestroyed()) contents.enableDeviceEmulation(params);
  });
}
