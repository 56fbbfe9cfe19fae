import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Browser, BrowserContext, Page } from 'playwright-core';

import { contextOptions } from './browser-baselines.js';
import { CHROMIUM_ARGS, type Scenario } from './scenarios.js';

// The tools people would use instead, driven on the same Chromium and the same pages: pinned in
// bench/peers/ (a package of their own, installed with --ignore-scripts so that none of them
// downloads a browser or an ad-block list), and the no-isolation floor.

const PEERS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/peers');

/** Installs bench/peers from its lockfile when a fresh clone has not yet. */
export function ensurePeersInstalled(): void {
  if (fs.existsSync(path.join(PEERS_DIR, 'node_modules', 'browserless'))) return;
  process.stderr.write('installing the peer tools (bench/peers, pinned, without install scripts)...\n');
  execFileSync('npm', ['ci', '--prefix', PEERS_DIR, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: 'inherit',
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1' },
  });
}

interface CaptureWebsite {
  buffer(url: string, options: Record<string, unknown>): Promise<Uint8Array>;
}
interface BrowserlessContext {
  screenshot(url: string, options: Record<string, unknown>): Promise<Uint8Array>;
  html(url: string, options: Record<string, unknown>): Promise<string>;
  destroyContext(): Promise<void>;
}
interface BrowserlessBrowser {
  createContext(): Promise<BrowserlessContext>;
  close(): Promise<void>;
}

export interface Peers {
  /** capture-website: a browser launched for each call and closed after it, as command-line tools work. */
  captureWebsite(url: string, s: Scenario): Promise<Uint8Array>;
  /** microlink's browserless: one warm browser, a context per capture. */
  browserless(url: string, s: Scenario): Promise<Uint8Array>;
  /** The pid whose child browsers are the peers' (this process). */
  close(): Promise<void>;
}

/**
 * Both peers on `executablePath` with the switches the baselines use. Each is asked for what
 * the service does by default: the viewport, scale and user agent of the scenario's preset, the
 * full page where the scenario asks, a PNG. browserless is told to wait for the load event and
 * nothing else (its defaults add network-idle waits, an ad blocker and retries while the picture
 * is white); capture-website is told not to block ads (its default fetches a block list on every
 * call) and always waits for network idle (networkidle2), which it has no option to change.
 */
export async function startPeers(executablePath: string, chromeVersion: string): Promise<Peers> {
  ensurePeersInstalled();
  const require = createRequire(path.join(PEERS_DIR, 'package.json'));
  const captureWebsite = ((await import(require.resolve('capture-website'))) as { default: CaptureWebsite }).default;
  const createBrowser = require('browserless') as (options: Record<string, unknown>) => BrowserlessBrowser;
  const browserless = createBrowser({ puppeteer: require('puppeteer-core'), executablePath, args: CHROMIUM_ARGS, headless: true });

  const view = (s: Scenario) => {
    const o = contextOptions(s, chromeVersion);
    return { width: o.viewport.width, height: o.viewport.height, deviceScaleFactor: o.deviceScaleFactor, isMobile: o.isMobile, hasTouch: o.hasTouch, userAgent: o.userAgent };
  };
  return {
    async captureWebsite(url, s) {
      const v = view(s);
      return captureWebsite.buffer(url, {
        width: v.width,
        height: v.height,
        scaleFactor: v.deviceScaleFactor,
        userAgent: v.userAgent,
        fullPage: s.fullPage,
        type: 'png',
        // Its default fetches an ad-block list on every call; the service blocks nothing unless asked.
        blockAds: false,
        timeout: 30,
        launchOptions: { executablePath, args: CHROMIUM_ARGS, headless: true },
      });
    },
    async browserless(url, s) {
      const v = view(s);
      const context = await browserless.createContext();
      try {
        return await context.screenshot(url, {
          adblock: false,
          waitUntil: 'load',
          isPageReady: () => true,
          codeScheme: false,
          type: 'png',
          fullPage: s.fullPage,
          viewport: { width: v.width, height: v.height, deviceScaleFactor: v.deviceScaleFactor, isMobile: v.isMobile, hasTouch: v.hasTouch },
          headers: { 'user-agent': v.userAgent },
          timeout: 30_000,
        });
      } finally {
        await context.destroyContext();
      }
    },
    close: () => browserless.close(),
  };
}

/**
 * The no-isolation floor: pages kept open and reused for every capture (what the service may
 * not do: cookies, storage and scripts of one capture would reach the next), one context per
 * preset, a page per concurrent capture. The limit of the machine for load, PNG and HTML.
 */
export class ReusedPages {
  private readonly contexts = new Map<string, BrowserContext>();
  private readonly idle = new Map<string, Page[]>();

  constructor(private readonly browser: Browser) {}

  async capture(url: string, s: Scenario): Promise<Buffer> {
    const page = await this.take(s);
    try {
      await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
      const png = await page.screenshot({ fullPage: s.fullPage, type: 'png', timeout: 30_000 });
      await page.content();
      return png;
    } finally {
      this.idle.get(s.preset.name)!.push(page);
    }
  }

  private async take(s: Scenario): Promise<Page> {
    const key = s.preset.name;
    let context = this.contexts.get(key);
    if (!context) {
      context = await this.browser.newContext(contextOptions(s, this.browser.version()));
      this.contexts.set(key, context);
      this.idle.set(key, []);
    }
    return this.idle.get(key)!.pop() ?? (await context.newPage());
  }

  async close(): Promise<void> {
    for (const context of this.contexts.values()) await context.close().catch(() => undefined);
  }
}
