/** Device names accepted in `devices` of POST /v1/screenshot (`all` expands to every device). */
export const DEVICE_NAMES = ['desktop', 'tablet', 'mobile'] as const;
export type DeviceName = (typeof DEVICE_NAMES)[number];

/** Preset names reported in the `preset` field of a job. */
export type PresetName = 'desktop' | 'tablet_landscape' | 'mobile';

export interface Preset {
  name: PresetName;
  device: DeviceName;
  width: number;
  height: number;
  deviceScaleFactor: number;
  isMobile: boolean;
  hasTouch: boolean;
  /** User agent without Googlebot; `{chrome}` is replaced by the engine's real Chromium version. */
  userAgent: string;
  /** Googlebot variant used for this preset when `googlebot: true`. */
  googlebot: 'desktop' | 'smartphone';
}

export const PRESETS: Record<DeviceName, Preset> = {
  desktop: {
    name: 'desktop',
    device: 'desktop',
    width: 1920,
    height: 1080,
    deviceScaleFactor: 1,
    isMobile: false,
    hasTouch: false,
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome} Safari/537.36',
    googlebot: 'desktop',
  },
  tablet: {
    name: 'tablet_landscape',
    device: 'tablet',
    width: 1024,
    height: 768,
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome} Safari/537.36',
    googlebot: 'smartphone',
  },
  mobile: {
    name: 'mobile',
    device: 'mobile',
    width: 390,
    height: 844,
    deviceScaleFactor: 3,
    isMobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome} Mobile Safari/537.36',
    googlebot: 'smartphone',
  },
};

export const PRESET_BY_NAME: Record<PresetName, Preset> = {
  desktop: PRESETS.desktop,
  tablet_landscape: PRESETS.tablet,
  mobile: PRESETS.mobile,
};

/**
 * Googlebot user agents as Google documents them; `W.X.Y.Z` is replaced by the
 * engine's real Chromium version so the page sees a consistent browser.
 */
export const GOOGLEBOT_USER_AGENTS = {
  desktop:
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/W.X.Y.Z Safari/537.36',
  smartphone:
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
} as const;

/** The user agent a capture of `preset` sends, given the engine's Chromium version. */
export function userAgentFor(preset: Preset, googlebot: boolean, chromeVersion: string): string {
  return googlebot
    ? GOOGLEBOT_USER_AGENTS[preset.googlebot].replace('W.X.Y.Z', chromeVersion)
    : preset.userAgent.replace('{chrome}', chromeVersion);
}
