// Every way to ask for a bitmap (a selector's element, a clip, the scale) keeps within the one
// bound of capture-clip.ts's bitmapSize(), in real Chromium: the capture is cut, says so, and
// comes back without holding the browser for a bitmap of hundreds of millions of pixels.
import { performance } from 'node:perf_hooks';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CaptureOptions } from '../../server/capture/capture-options.js';
import { ChromiumEngine } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import type { CaptureRequest, CaptureResult, ImageFormat } from '../../server/capture/engine.js';
import { MAX_CAPTURE_PIXELS } from '../../server/capture/pipeline/capture-clip.js';
import { PRESETS } from '../../server/capture/presets.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { captureRequest } from './conformance-cases.js';

const GREEN = [0, 255, 0];
/** The longest side of a PNG capture, in device pixels: Chromium paints no further (capture-clip.ts). */
const LONGEST_SIDE = 1 << 18;

let fixture: FixtureServer;
const engine = new ChromiumEngine({ executablePath: findChromium(process.env.CHROMIUM_PATH) });
beforeAll(async () => {
  fixture = await startFixtureServer();
  await engine.start();
});
afterAll(async () => {
  await engine.close();
  await fixture?.close();
});

/** A mobile (3x) capture of `path` with `options`; `scale` overrides the preset's, as the job runner does. */
function mobile(path: string, options: CaptureOptions, more: { format?: ImageFormat; scale?: number } = {}): CaptureRequest {
  const preset = more.scale === undefined ? PRESETS.mobile : { ...PRESETS.mobile, deviceScaleFactor: more.scale };
  return captureRequest(fixture.url, path, { preset, format: more.format ?? 'png', options, captureTimeoutMs: 60_000 });
}

/** Captures, and notes how long it took (the figure is printed, never asserted). */
async function timed(what: string, request: CaptureRequest): Promise<CaptureResult> {
  const started = performance.now();
  const result = await engine.capture(request);
  console.log(`${what}: ${result.width} x ${result.height} in ${Math.round(performance.now() - started)} ms`);
  return result;
}

/** The colours of the image's corners, read from small crops (the image can be a million pixels wide). */
async function corners(result: CaptureResult): Promise<number[][]> {
  const at = async (left: number, top: number) => {
    const data = await sharp(result.image, { limitInputPixels: false }).extract({ left, top, width: 1, height: 1 }).removeAlpha().raw().toBuffer();
    return [...data];
  };
  return [await at(0, 0), await at(result.width - 1, result.height - 1)];
}

function expectBounded(result: CaptureResult): void {
  expect(result.truncated).toBe(true);
  expect(result.width * result.height).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
}

describe('the bitmap bound in real Chromium', () => {
  it('cuts the element of a selector 33,000,000 px wide and 1 px tall on mobile (asked: 297 M device pixels) and says so', async () => {
    const result = await timed('selector, 33,000,000 x 1', mobile('/opt/wide.html?h=1', { selector: '#wide' }));
    expectBounded(result);
    expect([result.width, result.height]).toEqual([LONGEST_SIDE, 3]);
    expect(await corners(result)).toEqual([GREEN, GREEN]);
  }, 90_000);

  it('cuts the element of a selector 33,000,000 px wide and 100 px tall on mobile at its right, keeping its height', async () => {
    const result = await timed('selector, 33,000,000 x 100', mobile('/opt/wide.html?h=100', { selector: '#wide' }));
    expectBounded(result);
    expect([result.width, result.height]).toEqual([LONGEST_SIDE, 300]);
    expect(await corners(result)).toEqual([GREEN, GREEN]);
  }, 90_000);

  it('cuts a clip 33,000,000 px wide on mobile and says so', async () => {
    const result = await timed('clip, 33,000,000 x 10', mobile('/opt/wide.html?h=10', { clip: { x: 0, y: 0, width: 33_000_000, height: 10 } }));
    expectBounded(result);
    expect([result.width, result.height]).toEqual([LONGEST_SIDE, 30]);
    expect(await corners(result)).toEqual([GREEN, GREEN]);
  }, 90_000);

  it('cuts a WebP clip that fits at scale 2 but not at scale 3 to 16383 pixels wide, and says so', async () => {
    const clip = { x: 0, y: 0, width: 6000, height: 10 };
    const fits = await timed('webp clip 6000 x 10 at 2x', mobile('/opt/wide.html?h=10', { clip }, { format: 'webp', scale: 2 }));
    expect([fits.width, fits.height, fits.truncated]).toEqual([12_000, 20, false]);
    const cut = await timed('webp clip 6000 x 10 at 3x', mobile('/opt/wide.html?h=10', { clip }, { format: 'webp', scale: 3 }));
    expectBounded(cut);
    expect([cut.width, cut.height]).toEqual([16_383, 30]);
    const meta = await sharp(cut.image).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 16_383, 30]);
  }, 90_000);

  it('cuts a JPEG of an element 70,000 px tall at 65,500 pixels, the most a JPEG takes, and says so', async () => {
    const result = await timed('jpeg selector, 20 x 70,000 at 1x', mobile('/opt/wide.html?w=20&h=70000', { selector: '#wide' }, { format: 'jpeg', scale: 1 }));
    expectBounded(result);
    expect([result.width, result.height]).toEqual([20, 65_500]);
    const meta = await sharp(result.image).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 20, 65_500]);
    expect(result.warnings).toContainEqual({ code: 'truncated', message: 'The element is 70000 px tall; the picture stops at 65500 px, the most a capture may have.' });
  }, 90_000);

  it('prints a PDF whose CSS asks for a page size Chromium refuses (1000 in) on A4, and keeps one it prints (100 in)', async () => {
    /** Each page's size in points, from the PDF's MediaBox entries. */
    const pageSizes = (pdf: Buffer) =>
      [...pdf.toString('latin1').matchAll(/\/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]/g)].map((m) => [Math.round(Number(m[1])), Math.round(Number(m[2]))]);
    const huge = await timed('pdf, @page 1000in', mobile('/opt/wide.html?w=500', { styles: '@page { size: 1000in 1000in }' }, { format: 'pdf' }));
    expect(pageSizes(huge.image)).toEqual([[596, 842]]);
    const large = await timed('pdf, @page 100in', mobile('/opt/wide.html?w=500', { styles: '@page { size: 100in 100in }' }, { format: 'pdf' }));
    expect(pageSizes(large.image)).toEqual([[7200, 7200]]);
  }, 90_000);
});
