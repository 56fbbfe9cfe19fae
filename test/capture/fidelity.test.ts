import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChromiumEngine } from '../../server/capture/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium-path.js';
import type { CaptureResult } from '../../server/capture/engine.js';
import { PRESETS } from '../../server/capture/presets.js';
import { SECTION_COLOURS, SECTION_HEIGHT } from '../fixtures/fidelity-pages.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { captureRequest } from './conformance-cases.js';

// Real pages captured right: content-visibility, scripts other than Latin and colour emoji,
// WebP's size limit said, and lazy content loaded before a full page is taken.

type Raw = { data: Buffer; width: number; height: number; channels: number };

async function raw(result: CaptureResult): Promise<Raw> {
  const { data, info } = await sharp(result.image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

function rgbAt(image: Raw, x: number, y: number): [number, number, number] {
  const at = (y * image.width + x) * image.channels;
  return [image.data[at]!, image.data[at + 1]!, image.data[at + 2]!];
}

/** The rectangle's pixels, as bytes (to compare glyph renderings). */
function crop(image: Raw, x: number, y: number, width: number, height: number): Buffer {
  const rows: Buffer[] = [];
  for (let row = y; row < y + height; row++) {
    const start = (row * image.width + x) * image.channels;
    rows.push(image.data.subarray(start, start + width * image.channels));
  }
  return Buffer.concat(rows);
}

/** CSS `hsl(h, 80%, 50%)` as RGB. */
function hsl(h: number): [number, number, number] {
  const l = 0.5;
  const a = 0.8 * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

const near = (a: number[], b: number[], tolerance = 10) => a.every((v, i) => Math.abs(v - b[i]!) <= tolerance);

describe('capture fidelity on real pages', () => {
  let fixture: FixtureServer;
  let engine: ChromiumEngine;

  beforeAll(async () => {
    fixture = await startFixtureServer();
    engine = new ChromiumEngine({ executablePath: findChromium(process.env.CHROMIUM_PATH) });
    await engine.start();
  }, 60_000);

  afterAll(async () => {
    await engine?.close();
    await fixture?.close();
  });

  it('renders content-visibility: auto sections before measuring a full page: the real height, every section painted', async () => {
    const result = await engine.capture(captureRequest(fixture.url, '/fidelity/content-visibility.html', { fullPage: true }));
    const image = await raw(result);
    expect(result.truncated).toBe(false);
    expect(image.height).toBe(SECTION_COLOURS.length * SECTION_HEIGHT);
    SECTION_COLOURS.forEach((_, i) => {
      const y = i * SECTION_HEIGHT + SECTION_HEIGHT / 2;
      expect(near(rgbAt(image, 1000, y), hsl(i * 30)), `section ${i + 1} at y=${y} is ${rgbAt(image, 1000, y).join(',')}`).toBe(true);
    });
  });

  it('renders Japanese, Chinese, Korean and Arabic as different glyphs, and the emoji in colour', async () => {
    const result = await engine.capture(captureRequest(fixture.url, '/fidelity/scripts.html'));
    const image = await raw(result);
    const boxes = ['ja', 'zh', 'ko', 'ar'].map((_, i) => crop(image, 20, i * 120, 600, 110));
    // Each box has ink, and no two render alike (missing glyphs would be identical tofu boxes).
    for (const box of boxes) expect(box.some((v) => v < 128)).toBe(true);
    // The first two glyphs of each line, side by side, differ too.
    const firstGlyphs = [0, 1, 2, 3].map((i) => [crop(image, 20, i * 120 + 5, 80, 100), crop(image, 100, i * 120 + 5, 80, 100)]);
    for (const [a, b] of firstGlyphs) expect(a!.equals(b!)).toBe(false);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) expect(boxes[i]!.equals(boxes[j]!)).toBe(false);
    // The emoji: saturated pixels (a monochrome outline has none).
    const emoji = crop(image, 20, 480, 120, 110);
    let coloured = 0;
    for (let p = 0; p < emoji.length; p += 3) {
      const [r, g, b] = [emoji[p]!, emoji[p + 1]!, emoji[p + 2]!];
      if (Math.max(r, g, b) - Math.min(r, g, b) > 80) coloured++;
    }
    expect(coloured).toBeGreaterThan(500);
  });

  it('cuts a WebP full page at 16383 image pixels (5461 CSS px on mobile) and says so', async () => {
    const result = await engine.capture(
      captureRequest(fixture.url, '/tall.html?h=9000', { preset: PRESETS.mobile, fullPage: true, format: 'webp' }),
    );
    expect(result.truncated).toBe(true);
    expect(result.height).toBeLessThanOrEqual(16_383);
    expect(result.height).toBeGreaterThan(16_300);
    const image = await raw(result);
    expect(rgbAt(image, 600, image.height - 2).some((v) => v < 240), 'the bottom row is painted').toBe(true);
  });

  it('loads every lazy image (native and script-driven) before taking a full page', async () => {
    const result = await engine.capture(captureRequest(fixture.url, '/fidelity/lazy-images.html', { fullPage: true }));
    const image = await raw(result);
    expect(image.height).toBe(16_000);
    for (let i = 0; i < 40; i++) {
      expect(near(rgbAt(image, 100, i * 400 + 100), [0, 255, 0]), `image ${i} at y=${i * 400}: ${rgbAt(image, 100, i * 400 + 100).join(',')}`).toBe(true);
    }
  });

  it('loads every loading=lazy frame before taking a full page', async () => {
    const result = await engine.capture(captureRequest(fixture.url, '/fidelity/lazy-frames.html', { fullPage: true }));
    const image = await raw(result);
    for (let i = 0; i < 6; i++) {
      expect(near(rgbAt(image, 150, i * 2000 + 150), [0, 255, 0]), `frame ${i}: ${rgbAt(image, 150, i * 2000 + 150).join(',')}`).toBe(true);
    }
  });

  it('takes an infinite-scroll page down to the height cap, with content all the way', async () => {
    const result = await engine.capture(captureRequest(fixture.url, '/fidelity/infinite.html', { fullPage: true, maxHeight: 8_000 }));
    const image = await raw(result);
    expect(result.truncated).toBe(true);
    expect(image.height).toBe(8_000);
    for (const y of [500, 4_500, 7_990]) expect(rgbAt(image, 1000, y).some((v) => v < 240), `content at y=${y}`).toBe(true);
  });
});
