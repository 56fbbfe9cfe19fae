import { type Browser, chromium, type Page } from 'playwright-core';

import type { JobContextOptions } from '../server/capture/chromium/context-prewarmer.js';
import { userAgentFor } from '../server/capture/presets.js';
import { CHROMIUM_ARGS, type Scenario } from './scenarios.js';

/** The context a scenario asks for: the service's preset, applied the playwright way. */
export function contextOptions(s: Scenario, chromeVersion: string): JobContextOptions {
  return {
    viewport: { width: s.preset.width, height: s.preset.height },
    deviceScaleFactor: s.preset.deviceScaleFactor,
    isMobile: s.preset.isMobile,
    hasTouch: s.preset.hasTouch,
    userAgent: userAgentFor(s.preset, false, chromeVersion),
  };
}

export function launch(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/** One capture on a fresh page, the same steps for both baselines: load, PNG, the HTML. */
async function captureOn(page: Page, url: string, s: Scenario): Promise<Buffer> {
  await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
  const png = await page.screenshot({ fullPage: s.fullPage, type: 'png', timeout: 30_000 });
  await page.content();
  return png;
}

/**
 * The raw floor: one warm browser, a fresh context and page per capture, `goto` until load,
 * a PNG screenshot (full page where asked), the page's HTML, and the context closed. This is
 * what a careful script written directly against playwright-core does.
 */
export async function rawCapture(browser: Browser, url: string, s: Scenario): Promise<Buffer> {
  const context = await browser.newContext(contextOptions(s, browser.version()));
  try {
    return await captureOn(await context.newPage(), url, s);
  } finally {
    await context.close().catch(() => undefined);
  }
}

/**
 * The usual baseline: a browser launched for each capture and closed after it, as
 * command-line screenshot tools do.
 */
export async function newBrowserCapture(executablePath: string, url: string, s: Scenario): Promise<Buffer> {
  const browser = await launch(executablePath);
  try {
    return await captureOn(await browser.newPage(contextOptions(s, browser.version())), url, s);
  } finally {
    await browser.close().catch(() => undefined);
  }
}

/** The latency floor: `goto` plus a screenshot on a page that is already open and reused. */
export async function reusedPageCapture(page: Page, url: string): Promise<Buffer> {
  await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
  return page.screenshot({ type: 'png', timeout: 30_000 });
}
