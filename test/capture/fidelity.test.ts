import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import type { CaptureResult } from '../../server/capture/engine.js';
import { PRESETS } from '../../server/capture/presets.js';
import { CELL_GAP, CELL_HEIGHT, CELL_LEFT, ROW_STEP, SCRIPT_ROWS, SECTION_COLOURS, SECTION_HEIGHT } from '../fixtures/fidelity-pages.js';
import { engineWithFixtures } from '../helpers/capture-engine.js';
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
  const setup = engineWithFixtures();

  it('renders content-visibility: auto sections before measuring a full page: the real height, every section painted', async () => {
    const result = await setup.engine.capture(captureRequest(setup.fixture.url, '/fidelity/content-visibility.html', { fullPage: true }));
    const image = await raw(result);
    // 12 sections of 1000 px; their 3000 px placeholders would make 36,000 px, cut at the cap.
    expect(result.truncated).toBe(false);
    expect(image.height).toBe(SECTION_COLOURS.length * SECTION_HEIGHT);
    SECTION_COLOURS.forEach((_, i) => {
      for (const y of [i * SECTION_HEIGHT + SECTION_HEIGHT / 2, (i + 1) * SECTION_HEIGHT - 1]) {
        expect(near(rgbAt(image, 1000, y), hsl(i * 30)), `section ${i + 1} at y=${y} is ${rgbAt(image, 1000, y).join(',')}`).toBe(true);
      }
      // The section's heading is painted: dark text over the colour at its top left.
      const heading = crop(image, 20, i * SECTION_HEIGHT + 20, 200, 50);
      expect(heading.some((v) => v < 60), `section ${i + 1} shows its heading`).toBe(true);
    });
  });

  it('keeps content-visibility: hidden content hidden, and leaves the page source as the page made it', async () => {
    const result = await setup.engine.capture(captureRequest(setup.fixture.url, '/fidelity/content-visibility.html', { fullPage: true }));
    const image = await raw(result);
    // The hidden block is 500 px of grey: it would add to the height and show between sections 6 and 7.
    expect(image.height).toBe(SECTION_COLOURS.length * SECTION_HEIGHT);
    for (let y = 0; y < image.height; y += 50) expect(near(rgbAt(image, 1000, y), [128, 128, 128]), `grey at y=${y}`).toBe(false);
    // Only the section whose auto is !important (which outranks the override) carries an inline one.
    expect(result.html?.match(/content-visibility: visible/g) ?? []).toHaveLength(1);
    expect(result.html).not.toMatch(/<style>[^<]*visible/);
  });

  it('renders Japanese, Chinese, Korean and Arabic as different glyphs, and emoji in colour', async () => {
    const result = await setup.engine.capture(captureRequest(setup.fixture.url, '/fidelity/scripts.html'));
    const image = await raw(result);
    const cells = SCRIPT_ROWS.flatMap(({ lang, cells: glyphs, cellWidth }, row) =>
      glyphs.map((glyph, i) => ({
        name: `${lang} ${glyph}`,
        pixels: crop(image, CELL_LEFT + i * (cellWidth + CELL_GAP), row * ROW_STEP, cellWidth, CELL_HEIGHT),
      })),
    );
    // Every cell has ink, and no two cells render alike: glyphs missing from the fonts would all
    // be drawn as the same empty box.
    for (const cell of cells) expect(cell.pixels.some((v) => v < 128), `${cell.name} has ink`).toBe(true);
    for (let i = 0; i < cells.length; i++) {
      for (let j = i + 1; j < cells.length; j++) {
        expect(cells[i]!.pixels.equals(cells[j]!.pixels), `${cells[i]!.name} and ${cells[j]!.name} differ`).toBe(false);
      }
    }
    // Emoji: saturated pixels (a monochrome outline has none).
    for (const cell of cells.filter(({ name }) => name.startsWith('en '))) {
      let coloured = 0;
      for (let p = 0; p < cell.pixels.length; p += 3) {
        const [r, g, b] = [cell.pixels[p]!, cell.pixels[p + 1]!, cell.pixels[p + 2]!];
        if (Math.max(r, g, b) - Math.min(r, g, b) > 80) coloured++;
      }
      expect(coloured, `${cell.name} is in colour`).toBeGreaterThan(1_000);
    }
  });

  it('cuts a WebP full page at 16383 image pixels (5461 CSS px on mobile) and says so', async () => {
    const result = await setup.engine.capture(
      captureRequest(setup.fixture.url, '/tall.html?h=9000', { preset: PRESETS.mobile, fullPage: true, format: 'webp' }),
    );
    expect(result.truncated).toBe(true);
    expect([result.width, result.height]).toEqual([1170, 16_383]);
    const image = await raw(result);
    expect([image.width, image.height]).toEqual([1170, 16_383]);
    // The bottom row is the page's (its 11th band, a gradient with text), not blank.
    const bottom = crop(image, 0, image.height - 1, image.width, 1);
    expect(bottom.some((v) => v < 200), 'the bottom row is painted').toBe(true);
  });

  it('loads every lazy image (native and script-driven) before taking a full page', async () => {
    const result = await setup.engine.capture(captureRequest(setup.fixture.url, '/fidelity/lazy-images.html', { fullPage: true }));
    const image = await raw(result);
    expect(image.height).toBe(16_000);
    for (let i = 0; i < 40; i++) {
      expect(near(rgbAt(image, 100, i * 400 + 100), [0, 255, 0]), `image ${i} at y=${i * 400}: ${rgbAt(image, 100, i * 400 + 100).join(',')}`).toBe(true);
    }
  });

  it('loads every loading=lazy frame before taking a full page', async () => {
    const result = await setup.engine.capture(captureRequest(setup.fixture.url, '/fidelity/lazy-frames.html', { fullPage: true }));
    const image = await raw(result);
    for (let i = 0; i < 6; i++) {
      expect(near(rgbAt(image, 150, i * 2000 + 150), [0, 255, 0]), `frame ${i}: ${rgbAt(image, 150, i * 2000 + 150).join(',')}`).toBe(true);
    }
  });

  it.each(['scroll', 'observer'])('takes an endless feed (%s) down to the height cap, with content all the way', async (via) => {
    const result = await setup.engine.capture(captureRequest(setup.fixture.url, `/fidelity/infinite.html?via=${via}`, { fullPage: true }));
    const image = await raw(result);
    expect(result.truncated).toBe(true);
    expect(image.height).toBe(16_384);
    // Every 1000 px block is a saturated colour; blank page would be white.
    for (let y = 0; y < image.height; y += 250) {
      const [r, g, b] = rgbAt(image, 1000, y);
      expect(Math.max(r, g, b) - Math.min(r, g, b), `content at y=${y}: ${[r, g, b].join(',')}`).toBeGreaterThan(80);
    }
    expect(rgbAt(image, 1000, image.height - 1).some((v) => v < 200), 'the bottom row is painted').toBe(true);
  });
});
