import type { CaptureOptions } from '../capture-options.js';
import type { PageDriver } from '../pipeline/page-driver.js';

/**
 * `omit_background`: the page's default background made transparent before navigation, so a
 * png or webp keeps alpha 0 wherever the page paints nothing of its own (a background the page
 * sets on html or body stays). Costs nothing when not asked for.
 */
export async function omitBackground(driver: PageDriver, options: CaptureOptions): Promise<void> {
  if (!options.omitBackground) return;
  await driver.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } });
}
