import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import { comparePictures } from '../../server/monitors/picture-diff.js';
import { alignRows } from '../../server/monitors/picture-regions.js';
import { proposeMasks } from '../../server/monitors/proposed-masks.js';

const WIDTH = 400;

/** A page drawn as blocks: each a coloured bar of some height on white, 10 px apart. */
interface Bar {
  height: number;
  colour: string;
  /** How much of the width the bar takes, so bars of one colour still differ. */
  width: number;
}

function page(bars: Bar[], extra = ''): Promise<Buffer> {
  let y = 10;
  const rects = bars.map((bar) => {
    const rect = `<rect x="20" y="${y}" width="${bar.width}" height="${bar.height}" fill="${bar.colour}"/>`;
    y += bar.height + 10;
    return rect;
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y}"><rect width="100%" height="100%" fill="#fff"/>${rects.join('')}${extra}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

const PARAGRAPHS: Bar[] = Array.from({ length: 30 }, (_, i) => ({ height: 20 + (i % 4) * 6, colour: ['#222', '#444', '#2a6', '#a26'][i % 4]!, width: 200 + ((i * 37) % 160) }));

async function pixelAt(png: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * info.channels;
  return [data[i]!, data[i + 1]!, data[i + 2]!];
}

describe('comparePictures, rows aligned first', () => {
  it('reports a block inserted near the top as inserted, and the content below it as moved, not changed', async () => {
    const before = await page(PARAGRAPHS);
    // A 60 px paragraph after the second one: it starts at y = 10 + 20 + 10 + 26 + 10 = 76.
    const after = await page([...PARAGRAPHS.slice(0, 2), { height: 60, colour: '#06c', width: 300 }, ...PARAGRAPHS.slice(2)]);
    const found = await comparePictures(before, after);
    expect(found.regions.filter((r) => r.kind === 'changed')).toEqual([]);
    const inserted = found.regions.filter((r) => r.kind === 'inserted');
    expect(inserted).toHaveLength(1);
    // The block and the 10 px of white that come with it, wherever in the white they were put.
    expect(inserted[0]!.after!.height).toBe(70);
    expect(inserted[0]!.after!.y).toBeGreaterThanOrEqual(66);
    expect(inserted[0]!.after!.y).toBeLessThanOrEqual(76);
    const moved = found.regions.filter((r) => r.kind === 'moved');
    expect(moved.length).toBeGreaterThan(0);
    for (const region of moved) expect(region.after!.y - region.before!.y).toBe(70);
    const { height } = await sharp(after).metadata();
    expect(found.difference).toBeCloseTo(70 / height!, 6);
  });

  it('compares pictures of different heights without counting them wholly changed', async () => {
    const before = await page(PARAGRAPHS);
    const after = await page([...PARAGRAPHS, { height: 40, colour: '#06c', width: 300 }]);
    const found = await comparePictures(before, after);
    expect(found.difference).toBeGreaterThan(0);
    expect(found.difference).toBeLessThan(0.1);
    expect(found.regions.map((r) => r.kind)).toEqual(['inserted']);
    const shorter = await comparePictures(after, before);
    expect(shorter.difference).toBeLessThan(0.1);
    expect(shorter.regions.map((r) => [r.kind, r.after])).toEqual([['removed', null]]);
  });

  it('does not count the white below a page shorter than its viewport, pushed out by a block inserted above it', async () => {
    // Both pictures 600 px tall (the viewport): the new block pushes 40 px of white off the bottom.
    const content = await page(PARAGRAPHS.slice(0, 8));
    const tall = (png: Buffer) => sharp(png).extend({ bottom: 600 - 10 - PARAGRAPHS.slice(0, 8).reduce((n, bar) => n + bar.height + 10, 0), background: '#fff' }).png().toBuffer();
    const before = await tall(content);
    const after = await sharp(await page([PARAGRAPHS[0]!, { height: 30, colour: '#06c', width: 300 }, ...PARAGRAPHS.slice(1, 8)]))
      .extend({ bottom: 600 - 10 - 40 - PARAGRAPHS.slice(0, 8).reduce((n, bar) => n + bar.height + 10, 0), background: '#fff' })
      .png()
      .toBuffer();
    const found = await comparePictures(before, after);
    expect(found.regions.map((r) => r.kind)).toEqual(['inserted', 'moved']);
    expect(found.difference).toBeCloseTo((40 * WIDTH) / (600 * WIDTH), 6);
  });

  it('finds a change in place below an inserted block at its place in both pictures', async () => {
    const changedBars = PARAGRAPHS.map((bar, i) => (i === 20 ? { ...bar, colour: '#f80' } : bar));
    const before = await page(PARAGRAPHS);
    const after = await page([PARAGRAPHS[0]!, { height: 30, colour: '#06c', width: 300 }, ...changedBars.slice(1)]);
    const found = await comparePictures(before, after);
    const changed = found.regions.filter((r) => r.kind === 'changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.after!.y - changed[0]!.before!.y).toBe(40);
    expect(changed[0]!.after!.x).toBe(20);
    expect(found.regions.filter((r) => r.kind === 'inserted')).toHaveLength(1);
  });

  it('marks the diff picture: inserted rows green, changed pixels red', async () => {
    const before = await page(PARAGRAPHS.slice(0, 6));
    const after = await page([PARAGRAPHS[0]!, { height: 30, colour: '#06c', width: 300 }, ...PARAGRAPHS.slice(1, 6).map((bar, i) => (i === 3 ? { ...bar, colour: '#f80' } : bar))]);
    const found = await comparePictures(before, after);
    const inserted = found.regions.find((r) => r.kind === 'inserted')!.after!;
    const changed = found.regions.find((r) => r.kind === 'changed')!.after!;
    const [r, g, b] = await pixelAt(found.diff!, 30, inserted.y + Math.floor(inserted.height / 2));
    expect(g).toBeGreaterThan(r! + 40);
    expect(g).toBeGreaterThan(b! + 40);
    expect(await pixelAt(found.diff!, changed.x + 2, changed.y + 2)).toEqual([255, 0, 0]);
  });

  it('reports regions in CSS px, the picture px over the scale', async () => {
    const before = await page(PARAGRAPHS.slice(0, 4));
    const after = await page([PARAGRAPHS[0]!, { height: 40, colour: '#06c', width: 300 }, ...PARAGRAPHS.slice(1, 4)]);
    const found = await comparePictures(before, after, { scale: 2 });
    const inserted = found.regions.find((r) => r.kind === 'inserted')!.after!;
    expect(inserted.height).toBe(25);
    expect(inserted.width).toBe(WIDTH / 2);
  });
});

describe('comparePictures with rectangle masks', () => {
  const box = (x: number, y: number, w: number, h: number, colour: string) => `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="${colour}"/>`;

  it('ignores every pixel of a mask without a tolerance', async () => {
    const before = await page(PARAGRAPHS.slice(0, 10));
    const after = await page(PARAGRAPHS.slice(0, 10), box(250, 40, 100, 100, '#000'));
    expect((await comparePictures(before, after)).difference).toBeGreaterThan(0);
    expect(await comparePictures(before, after, { masks: [{ x: 240, y: 30, width: 120, height: 120 }] })).toEqual({ difference: 0, diff: null, regions: [] });
  });

  it('ignores small differences inside a mask with a tolerance, and not large ones', async () => {
    const before = await page(PARAGRAPHS.slice(0, 10));
    const mask = { x: 200, y: 20, width: 100, height: 100, tolerance: 0.05 };
    // 10 × 20 = 200 px of the mask's 10 000: 2 %, under its 5 %.
    const small = await comparePictures(before, await page(PARAGRAPHS.slice(0, 10), box(250, 40, 10, 20, '#f00')), { masks: [mask] });
    expect(small.difference).toBe(0);
    // 40 × 40 = 1 600 px: 16 %, counted whole.
    const large = await comparePictures(before, await page(PARAGRAPHS.slice(0, 10), box(250, 40, 40, 40, '#f00')), { masks: [mask] });
    expect(large.difference).toBeGreaterThan(0);
    expect(large.regions.filter((r) => r.kind === 'changed')).toHaveLength(1);
  });

  it('leaves a change outside a mask counted', async () => {
    const before = await page(PARAGRAPHS.slice(0, 10));
    const after = await page(PARAGRAPHS.slice(0, 10), box(250, 40, 20, 20, '#000') + box(250, 200, 20, 20, '#000'));
    const found = await comparePictures(before, after, { masks: [{ x: 240, y: 30, width: 40, height: 40 }] });
    expect(found.regions).toEqual([{ kind: 'changed', before: { x: 250, y: 200, width: 20, height: 20 }, after: { x: 250, y: 200, width: 20, height: 20 } }]);
  });
});

describe('proposeMasks', () => {
  it('proposes one box over the part of a page that changed between two captures, and none over the rest', async () => {
    const clock = (text: string) => `<rect x="240" y="60" width="120" height="30" fill="#eee"/><text x="250" y="82" font-size="20" font-family="monospace">${text}</text>`;
    const first = await page(PARAGRAPHS.slice(0, 10), clock('12:00:01'));
    const second = await page(PARAGRAPHS.slice(0, 10), clock('12:47:38'));
    const masks = await proposeMasks(first, second);
    expect(masks).toHaveLength(1);
    // The digits that changed (from the fourth character on), with 8 px around them.
    const [mask] = masks;
    expect(mask!.x).toBeGreaterThanOrEqual(250 + 3 * 12 - 8 - 4);
    expect(mask!.x).toBeLessThanOrEqual(250 + 3 * 12);
    expect(mask!.x + mask!.width).toBeLessThanOrEqual(360 + 8);
    expect(mask!.y).toBeGreaterThanOrEqual(60 - 8);
    expect(mask!.y + mask!.height).toBeLessThanOrEqual(90 + 8);
    expect(await proposeMasks(first, first)).toEqual([]);
  });
});

describe('alignRows', () => {
  const rows = (text: string) => {
    const hashes = new Int32Array(text.length * 2);
    [...text].forEach((c, i) => (hashes[i * 2] = c.charCodeAt(0)));
    return hashes;
  };

  it('keeps the rows two sequences share, the fewest inserted and removed between them', () => {
    expect(alignRows(rows('abcdef'), rows('abXYcdef'))).toEqual([
      { before: 0, after: 0, rows: 2 },
      { before: 2, after: 4, rows: 4 },
    ]);
  });

  it('drops rows that match by chance between larger edits, so a block changed in place reads as one change', () => {
    expect(alignRows(rows('xxaaaabyy'), rows('xxbccccyy'))).toEqual([
      { before: 0, after: 0, rows: 2 },
      { before: 7, after: 7, rows: 2 },
    ]);
  });

  it('pairs rows by position past its bound of edits', () => {
    expect(alignRows(rows('abcdeYgh'), rows('aQcdeRgh'), 0)).toEqual([
      { before: 0, after: 0, rows: 1 },
      { before: 6, after: 6, rows: 2 },
    ]);
  });
});
