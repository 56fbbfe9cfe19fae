// The functions the capture pipeline runs inside captured pages, run the way it runs them
// (evaluate() through the page's CDP session) in real Chromium against the fixture pages, with
// the frame fallback the Electron engine gives them for its hidden windows.
import { type Browser, chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { type JobPage, openJobPage } from '../../server/capture/chromium/context-prewarmer.js';
import { scrollThroughPage, settleAndMeasure } from '../../server/capture/in-page/page-scripts.js';
import { evaluate } from '../../server/capture/pipeline/page-driver.js';
import { documentSource } from '../../server/capture/pipeline/page-screenshot.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';

const FRAME_FALLBACK_MS = 100;

describe('page scripts in Chromium', () => {
  let fixture: FixtureServer;
  let browser: Browser;
  let job: JobPage | undefined;

  beforeAll(async () => {
    fixture = await startFixtureServer();
    browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
  });

  afterEach(async () => {
    await job?.context.close();
    job = undefined;
  });

  afterAll(async () => {
    for (const close of [() => browser?.close(), () => fixture?.close()]) {
      try {
        await close();
      } catch {
        // the others still close
      }
    }
  });

  const open = async (path: string, viewport = { width: 1920, height: 1080 }) => {
    job = await openJobPage(browser, { viewport, deviceScaleFactor: 1, isMobile: false, hasTouch: false, userAgent: 'page-scripts-test' });
    await job.page.goto(fixture.url + path);
    return job;
  };
  const scroll = (target: JobPage, maxMs: number, maxHeight: number) =>
    evaluate(target.driver, scrollThroughPage, { maxMs, maxHeight, frameFallbackMs: FRAME_FALLBACK_MS });

  it('scrolls a lazy page to the bottom so its content loads, then returns to the top', async () => {
    const target = await open('/lazy.html');
    expect((await scroll(target, 5_000, 16_384)).steps).toBeGreaterThan(1);
    expect(await target.page.evaluate('document.getElementById("lazy").textContent')).toBe('lazy content loaded');
    // The page's request and the scroll's answer come on different connections, in either order.
    await expect.poll(() => fixture.seen('/lazy-loaded')).toHaveLength(1);
    expect(await target.page.evaluate('window.scrollY')).toBe(0);
  });

  it('does not scroll past the height cap', async () => {
    const target = await open('/tall.html?h=20000');
    // Read where each scrollTo() lands, as it lands: scroll events come with the next frame and
    // coalesce, so on a busy machine the way down and back can fire one event, at the top.
    await target.page.evaluate(
      'window.deepest = 0; const to = window.scrollTo.bind(window); window.scrollTo = (...args) => { to(...args); window.deepest = Math.max(window.deepest, scrollY) }',
    );
    expect((await scroll(target, 5_000, 3_000)).reached).toBe(3_000);
    expect(await target.page.evaluate('window.deepest')).toBe(3_000 - 1080);
  });

  it('stops scrolling when its time is up', async () => {
    const target = await open('/tall.html?h=100000', { width: 800, height: 600 });
    const started = Date.now();
    await scroll(target, 300, 100_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await target.page.evaluate('window.scrollY')).toBe(0);
  });

  it('measures the viewport and the full document height', async () => {
    const target = await open('/tall.html?h=5000');
    expect(await evaluate(target.driver, settleAndMeasure, { frameFallbackMs: FRAME_FALLBACK_MS })).toEqual({
      viewportX: 0,
      viewportY: 0,
      viewportWidth: 1920,
      viewportHeight: 1080,
      scale: 1,
      fullHeight: 5000,
    });
  });

  it('serialises the page with its doctype, as playwright does', async () => {
    const target = await open('/small.html');
    const html = await documentSource(target.driver, 5_000_000);
    expect(html?.startsWith('<!DOCTYPE html><html>')).toBe(true);
    expect(html).toContain('<h1 id="title">Hello from the fixture</h1>');
    expect(html).toBe(await target.page.content());
  });

  it('gives no source longer than its bound, measured in the page', async () => {
    const target = await open('/small.html');
    const length = (await target.page.content()).length;
    expect(await documentSource(target.driver, length - 1)).toBeNull();
    expect(await documentSource(target.driver, length)).not.toBeNull();
  });

  it('reports an exception thrown in the page as an error', async () => {
    const target = await open('/small.html');
    const fail = (message: string) => {
      throw new Error(message);
    };
    await expect(evaluate(target.driver, fail, 'thrown in the page')).rejects.toThrow(/thrown in the page/);
  });
});
