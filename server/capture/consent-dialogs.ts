import type { CaptureOptions } from './capture-options.js';
import type { PageDriver } from './page-driver.js';

/** Before navigation: what must be in place for every document when `blockCookieBanners` is asked for. */
export async function prepareConsentDialogs(driver: PageDriver, options: CaptureOptions): Promise<void> {
  if (!options.blockCookieBanners) return;
  void driver;
}

/** After load, before the capture: dismisses or hides the page's consent dialogs, within `timeoutMs`. */
export async function dismissConsentDialogs(driver: PageDriver, options: CaptureOptions, timeoutMs: number): Promise<void> {
  if (!options.blockCookieBanners) return;
  void driver;
  void timeoutMs;
}
