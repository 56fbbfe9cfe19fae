import { type Browser, chromium } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import type { CaptureRequest } from '../../server/capture/engine.js';
import { MainFrame } from '../../server/capture/pipeline/main-frame.js';
import { evaluate, type PageDriver } from '../../server/capture/pipeline/page-driver.js';
import { navigate, preparePage } from '../../server/capture/pipeline/page-navigation.js';
import { PageTraffic } from '../../server/capture/pipeline/page-traffic.js';
import { type Preset, PRESETS, userAgentFor } from '../../server/capture/presets.js';
import { engineWithFixtures } from '../helpers/capture-engine.js';
import { captureLog } from '../helpers/capture-log.js';
import { captureRequest } from './conformance-cases.js';

// The layouts real pages use, captured by the service and, where a phone or a browser shows
// them plainly, compared pixel by pixel with the reference: a plain playwright capture with the
// same preset (viewport, scale, isMobile, hasTouch, user agent; goto to `load`; page.screenshot).

interface Raw {
  data: Buffer;
  width: number;
  height: number;
}

async function raw(image: Buffer, resize?: { width: number; height: number }): Promise<Raw> {
  const pipeline = resize ? sharp(image).resize(resize.width, resize.height, { fit: 'fill' }) : sharp(image);
  const { data, info } = await pipeline.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

function rgbAt(image: Raw, x: number, y: number): [number, number, number] {
  const at = (y * image.width + x) * 3;
  return [image.data[at]!, image.data[at + 1]!, image.data[at + 2]!];
}

/**
 * The fraction of pixels of which a channel differs by more than 10 % (the corpus's measure).
 * The sizes must be equal but for one row: the reference takes a zoomed-out phone screen's
 * height from the visual viewport's, 2120.82 CSS px × 0.398 × 3 = 2531.99, and drops the last
 * row of the 2532 the screen has; the rows both have are compared.
 */
function differing(a: Raw, b: Raw): number {
  expect(a.width, 'widths').toBe(b.width);
  expect(Math.abs(a.height - b.height), `heights ${a.height} and ${b.height}`).toBeLessThanOrEqual(1);
  const end = a.width * Math.min(a.height, b.height) * 3;
  let count = 0;
  for (let p = 0; p < end; p += 3) {
    if (Math.abs(a.data[p]! - b.data[p]!) > 25 || Math.abs(a.data[p + 1]! - b.data[p + 1]!) > 25 || Math.abs(a.data[p + 2]! - b.data[p + 2]!) > 25) count++;
  }
  return count / (end / 3);
}

const near = (a: number[], b: number[], tolerance = 10) => a.every((v, i) => Math.abs(v - b[i]!) <= tolerance);
/** Whether a pixel is white (blank). */
const white = ([r, g, b]: number[]) => r > 245 && g > 245 && b > 245;
/** The right end of the red-to-blue bar: blue. */
const blue = ([r, g, b]: number[]) => b > 200 && r < 60 && g < 40;

describe('real-page patterns', () => {
  const captured = captureLog();
  const setup = engineWithFixtures({ log: captured.log });
  /** What the engine logged about the page at `path`. */
  const notes = (path: string) => captured.records.filter((r) => r.url === setup.fixture.url + path).map((r) => r.msg);
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH) });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** The reference capture of `path` with `preset`. */
  async function reference(path: string, preset: Preset, fullPage: boolean): Promise<Buffer> {
    const context = await browser.newContext({
      viewport: { width: preset.width, height: preset.height },
      deviceScaleFactor: preset.deviceScaleFactor,
      isMobile: preset.isMobile,
      hasTouch: preset.hasTouch,
      userAgent: userAgentFor(preset, false, setup.engine.chromiumVersion()),
    });
    try {
      const page = await context.newPage();
      await page.goto(setup.fixture.url + path, { waitUntil: 'load' });
      return await page.screenshot({ fullPage });
    } finally {
      await context.close();
    }
  }

  async function service(path: string, overrides: Partial<CaptureRequest>): Promise<Raw> {
    const result = await setup.engine.capture(captureRequest(setup.fixture.url, path, overrides));
    const image = await raw(result.image);
    expect([image.width, image.height]).toEqual([result.width, result.height]);
    return image;
  }

  describe('a page without a viewport meta tag, laid out wider than the screen', () => {
    it.each([
      ['mobile', '/pattern/no-viewport.html'],
      ['tablet', '/pattern/wide.html'],
      ['mobile', '/pattern/no-viewport.html?late=1'],
    ] as const)('on %s, viewport: the zoomed-out first screen, as the reference (%s)', async (device, path) => {
      const preset = PRESETS[device];
      const image = await service(path, { preset });
      const ref = await raw(await reference(path, preset, false));
      // The bar reaches blue at the right edge, and no row is blank on its right 60 %.
      expect(blue(rgbAt(image, image.width - 3, 10)), `right end of the bar: ${rgbAt(image, image.width - 3, 10).join(',')}`).toBe(true);
      expect(white(rgbAt(image, Math.round(image.width * 0.7), 10)), 'the bar at 70 % of the width').toBe(false);
      expect(differing(image, ref)).toBeLessThanOrEqual(0.01);
    });

    it.each([
      ['mobile', '/pattern/no-viewport.html'],
      ['tablet', '/pattern/wide.html'],
    ] as const)('on %s, full page: the whole layout zoomed to the screen width, down to its end (%s)', async (device, path) => {
      const preset = PRESETS[device];
      const image = await service(path, { preset, fullPage: true });
      // The reference keeps the layout's width (980 or 1200 CSS px); the service zooms it to the
      // screen's, as the phone shows it: the same picture, scaled.
      const reference_ = await reference(path, preset, true);
      const meta = await sharp(reference_).metadata();
      const width = preset.width * preset.deviceScaleFactor;
      expect(image.width).toBe(width);
      expect(Math.abs(image.height - (meta.height! * width) / meta.width!)).toBeLessThanOrEqual(1);
      expect(blue(rgbAt(image, image.width - 3, 10)), `right end of the bar: ${rgbAt(image, image.width - 3, 10).join(',')}`).toBe(true);
      const ref = await raw(reference_, { width: image.width, height: image.height });
      expect(differing(image, ref)).toBeLessThanOrEqual(0.01);
    });
  });

  describe('a scroll the page makes itself at load', () => {
    it.each(['scrollIntoView', 'scrollTo'])('on mobile, is kept (%s), as the reference', async (via) => {
      const path = `/pattern/book.html?via=${via}`;
      const image = await service(path, { preset: PRESETS.mobile });
      const ref = await raw(await reference(path, PRESETS.mobile, false));
      // The current chapter (green) is on the screen, and the ones after it (blue).
      const rows = (colour: number[]) => {
        let count = 0;
        for (let y = 0; y < image.height; y += 10) if (near(rgbAt(image, 100, y), colour)) count++;
        return count;
      };
      expect(rows([0, 204, 0]), 'rows of the current chapter').toBeGreaterThan(10);
      expect(rows([51, 102, 204]), 'rows of the chapters after it').toBeGreaterThan(30);
      expect(differing(image, ref)).toBeLessThanOrEqual(0.01);
    });
  });

  describe('a page with a Web Worker that fetches (a search worker)', () => {
    // Chromium reports a worker's script to the page's session as it starts, and its end (and
    // every request of the worker) only to the worker's own target.
    const path = '/pattern/search-worker.html';

    it("networkidle: idle once the page's own requests are done, not at the time-out; the worker's answer shown", async () => {
      const image = await service(path, { options: { waitUntil: 'networkidle' }, navigationTimeoutMs: 10_000 });
      expect(notes(path).filter((msg) => /not idle/.test(msg))).toEqual([]);
      expect(near(rgbAt(image, 100, 50), [0, 255, 0]), `the search band: ${rgbAt(image, 100, 50).join(',')}`).toBe(true);
    });

    it("counts neither the worker's script nor the browser's request for the tab icon as the page's requests", async () => {
      // The pipeline's view of the page's network, on a page of the reference browser.
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const session = await context.newCDPSession(page);
        const driver: PageDriver = {
          send: (method, params) => session.send(method, params as never) as never,
          on: (event, handler) => void session.on(event, handler as never),
          off: (event, handler) => void session.off(event, handler as never),
        };
        const frame = new MainFrame(driver);
        const traffic = new PageTraffic(driver, frame);
        const icon = `traffic-${Date.now()}`;
        await preparePage(driver, frame);
        await navigate(driver, frame, traffic, `${setup.fixture.url}${path}?icon=${icon}`, undefined);
        await page.waitForFunction(() => document.getElementById('search')?.textContent === 'search ready');
        await expect.poll(() => setup.fixture.seen(`/img/icon-${icon}.png`).length).toBe(1);
        // A round trip on the session: the events sent before its answer have come.
        await evaluate(driver, () => 1, null);
        expect(traffic.requestsStarted(), 'the document only').toBe(1);
        expect(await traffic.networkIdle(0, 0), 'nothing in flight').toBe(true);
        traffic.dispose();
        frame.dispose();
      } finally {
        await context.close();
      }
    });

    it("load: no wait for the worker's requests after load", async () => {
      await service(`${path}?load`, {});
      expect(notes(`${path}?load`).filter((msg) => /in flight/.test(msg))).toEqual([]);
    });
  });

  describe('the layouts real pages use, on a full page', () => {
    /** Rows `from`..`to` (step 1) at `x` whose pixel satisfies `is`. */
    const rowsWhere = (image: Raw, x: number, is: (rgb: number[]) => boolean, from = 0, to = image.height) => {
      const rows: number[] = [];
      for (let y = from; y < to; y++) if (is(rgbAt(image, x, y))) rows.push(y);
      return rows;
    };
    const red = ([r, g, b]: number[]) => r > 200 && g < 40 && b < 40;

    it("a 100vh hero keeps the screen's height, not the page's", async () => {
      const image = await service('/pattern/hero.html', { fullPage: true });
      expect(image.height).toBe(1080 + 2000);
      expect(rowsWhere(image, 1500, red).length).toBe(1080);
    });

    it.each(['absolute', 'flex'])("an app whose main container scrolls, not its document (%s): the container's whole content", async (layout) => {
      const result = await setup.engine.capture(captureRequest(setup.fixture.url, `/pattern/app.html?layout=${layout}`, { fullPage: true }));
      const image = await raw(result.image);
      expect(result.html, 'the page source as the page made it').not.toMatch(/visible|4000px/);
      // The header, then 40 blocks of 100 px, the last one black.
      expect(image.height).toBe(60 + 4000);
      expect(near(rgbAt(image, 100, 30), [136, 136, 136]), 'the header').toBe(true);
      expect(near(rgbAt(image, 100, image.height - 30), [0, 0, 0]), `the last block: ${rgbAt(image, 100, image.height - 30).join(',')}`).toBe(true);
      for (let i = 0; i < 39; i++) expect(white(rgbAt(image, 300, 60 + i * 100 + 50)), `block ${i + 1}`).toBe(false);
    });

    it('sticky and fixed elements appear once, where a reader sees them', async () => {
      const image = await service('/pattern/sticky.html', { fullPage: true });
      expect(image.height).toBe(5000 + 80);
      const bar = ([r, g, b]: number[]) => b > 200 && r < 40 && g < 40;
      expect(rowsWhere(image, 300, red), 'the sticky header, at the top only').toEqual(Array.from({ length: 80 }, (_, y) => y));
      // The bar where the page's first screen ends, as a reader first sees it (and a viewport capture shows it).
      expect(rowsWhere(image, 300, bar), 'the fixed bar, once').toEqual(Array.from({ length: 50 }, (_, y) => 1080 - 50 + y));
    });

    it('a header the page pins while scrolled, and unpins only after a pause, is unpinned at the top, as the reference', async () => {
      const image = await service('/pattern/pinned-header.html', { fullPage: true });
      // The plain screenshot's resize to the page's height can make the page pin the header
      // itself; the comparison is with one that shows it as the page first does (of three tries).
      let ref = await raw(await reference('/pattern/pinned-header.html', PRESETS.desktop, true));
      for (let retake = 0; retake < 2 && rowsWhere(ref, 300, red).length !== 120; retake++) {
        ref = await raw(await reference('/pattern/pinned-header.html', PRESETS.desktop, true));
      }
      expect(rowsWhere(ref, 300, red).length, 'rows of the header in the plain screenshot').toBe(120);
      const title = rowsWhere(image, 300, red);
      expect(title.length, 'rows of the header as a reader first sees it').toBe(120);
      expect(rowsWhere(image, 300, ([r, g, b]) => b > 200 && r < 40 && g < 40), 'the pinned line').toEqual([]);
      expect(differing(image, ref)).toBeLessThanOrEqual(0.01);
    });

    it('images swapped in by an IntersectionObserver (data-src) are all loaded, on mobile', async () => {
      const image = await service('/pattern/lazy-data-src.html', { fullPage: true, preset: PRESETS.mobile });
      for (let i = 0; i < 20; i++) {
        const at = rgbAt(image, 300, (i * 600 + 100) * 3);
        expect(near(at, [0, 255, 0]), `image ${i + 1}: ${at.join(',')}`).toBe(true);
      }
    });

    // The second feed's next items arrive on the scroll after its end was in view: as a pass
    // returns to the top (an answer asked for before it began, a few frames late).
    it.each([
      ['an endless feed that fetches its items', '/pattern/feed.html'],
      ['a feed whose next items arrive as the scroll leaves its end', '/pattern/feed-on-return.html'],
    ])('%s is taken down to the height cap, and the capture ends', async (_, path) => {
      const result = await setup.engine.capture(captureRequest(setup.fixture.url, path, { fullPage: true }));
      const image = await raw(result.image);
      expect(result.truncated).toBe(true);
      expect(image.height).toBe(16_384);
      for (let y = 0; y < image.height; y += 500) expect(white(rgbAt(image, 1000, y)), `content at y=${y}`).toBe(false);
    });
  });

  it('a web font that arrives after load is drawn, not its fallback', async () => {
    const image = await service('/pattern/late-font.html', {});
    const yellow = ([r, g, b]: number[]) => r > 240 && g > 240 && b < 40;
    // The line's right end: 20 letters at 0.6 em of 40 px, 480 px in the web font; about 220 in the fallback.
    let end = 0;
    for (let x = 0; x < image.width; x++) if (yellow(rgbAt(image, x, 2))) end = x + 1;
    expect(end).toBeGreaterThan(440);
  });
});
