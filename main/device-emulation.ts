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
 * Makes the page see the preset's device: viewport, device pixel ratio, mobile viewport
 * rules and touch. The window's content size already equals the viewport; this adds the rest.
 */
export async function emulateDevice(contents: WebContents, preset: Preset, viewport: Viewport): Promise<void> {
  const params = emulationParameters(preset, viewport);
  const apply = () => {
    if (!contents.isDestroyed()) contents.enableDeviceEmulation(params);
  };
  // The emulation lives on the renderer's widget, so a navigation that swaps the renderer
  // (a cross-site page or redirect) drops it: apply it again on every main-frame commit.
  contents.on('did-navigate', apply);
  apply();
  // Electron has no touch switch of its own; the debugger's setting survives renderer swaps.
  if (preset.hasTouch) {
    await contents.debugger.sendCommand('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
  }
}

/**
 * Tells the debugger about the same device before it takes a screenshot. Its capture scales
 * from its own emulation state: without this it would render at the display's scale factor
 * (not the preset's 2× or 3×) and reset the page's emulation afterwards.
 */
export async function mirrorForDebuggerCapture(contents: WebContents, preset: Preset, viewport: Viewport): Promise<void> {
  await contents.debugger.sendCommand('Emulation.setDeviceMetricsOverride', {
    width: viewport.width,
    height: viewport.height,
    deviceScaleFactor: preset.deviceScaleFactor,
    mobile: preset.isMobile,
    screenWidth: viewport.width,
    screenHeight: viewport.height,
  });
}
