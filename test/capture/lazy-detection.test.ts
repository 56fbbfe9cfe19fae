// Whether a full-page capture scrolls through the page first: the capture pipeline scrolls only
// pages that may load content on scrolling (scrollThroughPage with onlyWhenLazy), noticed by the
// script every document gets once the pipeline has prepared the page (watchLazyLoading,
// installed by preparePage). Real Chromium, the fixture server's pages.
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { type JobPage, openJobPage } from '../../server/capture/chromium/context-prewarmer.js';
import { scrollThroughPage } from '../../server/capture/in-page/page-scripts.js';
import { MainFrame } from '../../server/capture/pipeline/main-frame.js';
import { evaluate } from '../../server/capture/pipeline/page-driver.js';
import { navigate, preparePage } from '../../server/capture/pipeline/page-navigation.js';
import { PageTraffic } from '../../server/capture/pipeline/page-traffic.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';

const SCROLL = { maxMs: 5_000, maxHeight: 16_384, onlyWhenLazy: true };
const DESKTOP = { viewport: { width: 1920, height: 1080 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false, userAgent: 'lazy-detection-test' };

describe('scrolling only pages that load content on scrolling', () => {
  let fixture: FixtureServer;
  let browser: Browser;

  beforeAll(async () => {
    fixture = await startFixtureServer();
    browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
  });

  afterAll(async () => {
    await browser?.close();
    await fixture?.close();
  });

  /** Opens a path in a job page, prepared and navigated as the pipeline does, and runs `work` on it. */
  async function onJobPage<T>(path: string, work: (job: JobPage) => Promise<T>): Promise<T> {
    const job = await openJobPage(browser, DESKTOP);
    const frame = new MainFrame(job.driver);
    const traffic = new PageTraffic(job.driver, frame);
    try {
      await preparePage(job.driver, frame);
      await navigate(job.driver, frame, traffic, fixture.url + path, undefined);
      await frame.until(() => frame.reached('load'));
      return await work(job);
    } finally {
      traffic.dispose();
      frame.dispose();
      await job.context.close();
    }
  }

  const scroll = (job: JobPage, options = SCROLL) => evaluate(job.driver, scrollThroughPage, options);

  it.each(['io', 'listener', 'onscroll'])('scrolls a page whose script loads content on scrolling (%s) and the content loads', async (kind) => {
    await onJobPage(`/lazy-kind.html?kind=${kind}`, async (job) => {
      expect((await scroll(job)).steps).toBeGreaterThan(0);
      await expect.poll(() => fixture.seen(`/lazy-loaded?kind=${kind}`).length).toBe(1);
      expect(await job.page.locator('#end').textContent()).toBe('lazy content loaded');
    });
  });

  it('scrolls the bare addEventListener("scroll") of a classic script', async () => {
    await onJobPage('/lazy.html', async (job) => {
      expect((await scroll(job)).steps).toBeGreaterThan(0);
      expect(await job.page.locator('#lazy').textContent()).toBe('lazy content loaded');
    });
  });

  it('scrolls a page with a native lazy image, which then loads', async () => {
    await onJobPage('/lazy-kind.html?kind=native', async (job) => {
      expect(fixture.seen('/img/lazy-native')).toHaveLength(0);
      expect((await scroll(job)).steps).toBeGreaterThan(0);
      await expect.poll(() => fixture.seen('/img/lazy-native').length).toBe(1);
    });
  });

  it('scrolls a page with a frame, whose scripts it cannot see', async () => {
    await onJobPage('/lazy-kind.html?kind=frame', async (job) => {
      expect((await scroll(job)).steps).toBeGreaterThan(0);
    });
  });

  it.each(['/lazy-kind.html?kind=none', '/tall.html?h=10000'])('does not scroll %s, which loads nothing on scrolling', async (path) => {
    await onJobPage(path, async (job) => {
      expect((await scroll(job)).steps).toBe(0);
      expect(await job.page.evaluate(() => window.scrollY)).toBe(0);
    });
  });

  it('does not scroll a page that fits the window, whatever it listens for', async () => {
    await onJobPage('/small.html', async (job) => {
      await job.page.evaluate(() => window.addEventListener('scroll', () => undefined));
      expect((await scroll(job)).steps).toBe(0);
    });
  });

  it('still scrolls every page when not asked to choose', async () => {
    await onJobPage('/tall.html?h=5000', async (job) => {
      expect((await scroll(job, { ...SCROLL, onlyWhenLazy: false })).steps).toBeGreaterThan(0);
    });
  });

  it('leaves what the page sees of the watched functions as it was', async () => {
    await onJobPage('/lazy-kind.html?kind=io', async ({ page }) => {
      const seen = await page.evaluate(() => ({
        observe: Function.prototype.toString.call(IntersectionObserver.prototype.observe),
        listen: Function.prototype.toString.call(EventTarget.prototype.addEventListener),
        frame: Function.prototype.toString.call(window.requestAnimationFrame),
        timers: [window.setTimeout, window.clearTimeout, window.cancelAnimationFrame].map((f) => Function.prototype.toString.call(f)),
        names: [IntersectionObserver.prototype.observe.name, EventTarget.prototype.addEventListener.name],
        lengths: [IntersectionObserver.prototype.observe.length, EventTarget.prototype.addEventListener.length],
        enumerable: Object.keys(window).filter((key) => key.includes('screenshot')),
        symbols: Object.getOwnPropertySymbols(window).length,
        works: (() => {
          let heard = 0;
          const target = new EventTarget();
          target.addEventListener('ping', () => heard++);
          target.dispatchEvent(new Event('ping'));
          return heard;
        })(),
      }));
      expect(seen.observe).toContain('[native code]');
      expect(seen.listen).toContain('[native code]');
      expect(seen.frame).toContain('[native code]');
      for (const timer of seen.timers) expect(timer).toContain('[native code]');
      expect(seen.names).toEqual(['observe', 'addEventListener']);
      expect(seen.lengths).toEqual([1, 2]);
      expect(seen.enumerable).toEqual([]);
      expect(seen.works).toBe(1);
      // The traces: non-enumerable symbol-keyed marks, one read by the wait for a settled page
      // (settle-signals.ts), one on a page that does observe.
      expect(seen.symbols).toBe(2);
    });
  });
});
