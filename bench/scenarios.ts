import { BASE_ARGS } from '../server/capture/chromium/chromium-switches.js';
import { type Preset, PRESETS } from '../server/capture/presets.js';

/** One page of the mix, captured the same way by every method. */
export interface Scenario {
  name: string;
  /** Path on the fixture server. */
  path: string;
  preset: Preset;
  fullPage: boolean;
}

/**
 * The mix every method captures, in this order, round after round: a small page, a
 * 10,000 px page with gradients and text (full page), and a page with 20 images. All PNG,
 * desktop preset (1920×1080 at scale 1), as a client asking for `{url, full_page}` gets.
 */
export const MIX: Scenario[] = [
  { name: 'small', path: '/small.html', preset: PRESETS.desktop, fullPage: false },
  { name: 'tall-10000', path: '/tall.html?h=10000', preset: PRESETS.desktop, fullPage: true },
  { name: 'images-20', path: '/images.html?n=20', preset: PRESETS.desktop, fullPage: false },
];

/** The scenario of the i-th capture of a run. */
export const scenarioAt = (i: number): Scenario => MIX[i % MIX.length];

/**
 * Chromium switches for the raw and new-browser baselines: the ones every headless run on these
 * machines needs. The service adds its own renderer-saving switches on top (chromium-switches.ts);
 * the baselines run Chromium as a playwright user would.
 */
export const CHROMIUM_ARGS = BASE_ARGS;

/** Debian's Chromium binary (the /usr/bin/chromium wrapper script starts about 20 ms slower). */
export const DEFAULT_CHROMIUM_PATH = '/usr/lib/chromium/chromium';
