// The scripts ElectronEngine runs inside captured pages, checked in real Chromium (the same
// engine Electron embeds) against the fixture pages, and the clip arithmetic around them.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clipFor } from '../../server/capture/capture-clip.js';
import { MEASURE_PAGE_SCRIPT, PAGE_SOURCE_SCRIPT, scrollThroughPageScript } from '../../main/page-scripts.js';
import { findChromium } from '../../server/capture/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium-switches.js';
import type { PageGeometry } from '../../server/capture/page-scripts.js';
import { startFixtureServer, type FixtureServer } from '../fixtures/fixture-server.js';

describe('page scripts in Chromium', () => {
  let fixture: FixtureServer;
  let browser: Browser;
  let page: Page | undefined;

  beforeAll(async () => {
    fixture = await startFixtureServer();
    browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
  });

  afterEach(async () => {
    await page?.context().close();
    page = undefined;
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
    const context = await browser.newContext({ viewport });
    page = await context.newPage();
    await page.goto(fixture.url + path);
    return page;
  };

  it('scrolls a lazy page to the bottom so its content loads, then returns to the top', async () => {
    const p = await open('/lazy.html');
    const steps = await p.evaluate(scrollThroughPageScript({ maxMs: 5_000, maxHeight: 16_384 }));
    expect(steps).toBeGreaterThan(1);
    expect(fixture.seen('/lazy-loaded')).toHaveLength(1);
    expect(await p.evaluate('document.getElementById("lazy").textContent')).toBe('lazy content loaded');
    expect(await p.evaluate('window.scrollY')).toBe(0);
  });

  it('does not scroll past the height cap', async () => {
    const p = await open('/tall.html?h=20000');
    await p.evaluate('window.deepest = 0; addEventListener("scroll", () => { window.deepest = Math.max(window.deepest, scrollY) })');
    await p.evaluate(scrollThroughPageScript({ maxMs: 5_000, maxHeight: 3_000 }));
    expect(await p.evaluate('window.deepest')).toBe(3_000 - 1080);
  });

  it('stops scrolling when its time is up', async () => {
    const p = await open('/tall.html?h=100000', { width: 800, height: 600 });
    const started = Date.now();
    await p.evaluate(scrollThroughPageScript({ maxMs: 300, maxHeight: 100_000 }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await p.evaluate('window.scrollY')).toBe(0);
  });

  it('measures the viewport and the full document height', async () => {
    const p = await open('/tall.html?h=5000');
    expect(await p.evaluate(MEASURE_PAGE_SCRIPT)).toEqual({
      viewportX: 0,
      viewportY: 0,
      viewportWidth: 1920,
      viewportHeight: 1080,
      scale: 1,
      fullHeight: 5000,
    });
  });

  it('serialises the page with its doctype', async () => {
    const p = await open('/small.html');
    const html = (await p.evaluate(PAGE_SOURCE_SCRIPT)) as string;
    expect(html.startsWith('<!DOCTYPE html><html>')).toBe(true);
    expect(html).toContain('<h1 id="title">Hello from the fixture</h1>');
    expect(html).toBe(await p.content());
  });
});

describe('capture clip', () => {
  const geometry: PageGeometry = {
    viewportX: 0,
    viewportY: 300,
    viewportWidth: 390,
    viewportHeight: 844,
    scale: 1,
    fullHeight: 5000,
  };

  it('captures the viewport where the page is scrolled to', () => {
    expect(clipFor(geometry, { fullPage: false, maxHeight: 16_384, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 300, width: 390, height: 844, scale: 1 },
      truncated: false,
      bitmapBytes: 1170 * 2532 * 4,
    });
  });

  it('captures a full page from the top and cuts it at maxHeight', () => {
    expect(clipFor(geometry, { fullPage: true, maxHeight: 16_384, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 0, width: 390, height: 5000, scale: 1 },
      truncated: false,
      bitmapBytes: 1170 * 15000 * 4,
    });
    expect(clipFor(geometry, { fullPage: true, maxHeight: 2000, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 0, width: 390, height: 2000, scale: 1 },
      truncated: true,
      bitmapBytes: 1170 * 6000 * 4,
    });
  });

  it('keeps a webp full page within the encoder limit at the device pixel ratio', () => {
    const { clip, truncated } = clipFor(geometry, { fullPage: true, maxHeight: 16_384, format: 'webp' }, 4);
    expect(clip.height).toBe(Math.floor(16_383 / 4));
    expect(truncated).toBe(true);
  });

  it('keeps a zoomed-out page at the viewport width by scaling with the zoom', () => {
    const zoomed = { ...geometry, viewportY: 0, viewportWidth: 980, viewportHeight: 2121, scale: 390 / 980 };
    const { clip } = clipFor(zoomed, { fullPage: false, maxHeight: 16_384, format: 'png' }, 3);
    expect(clip.width * clip.scale).toBeCloseTo(390);
  });
});
