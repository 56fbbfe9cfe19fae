import pixelmatch from 'pixelmatch';
import sharp from 'sharp';

import { alignRows, type ChangeRegion, hashRows, type MaskRect, type Rect } from './picture-regions.js';

/** What comparing two pictures found. */
export interface PictureDifference {
  /**
   * Differing pixels (changed in place, inserted, removed; moved rows do not count) over the
   * pixels of the taller picture; 1 when the widths differ.
   */
  difference: number;
  /**
   * The diff picture (PNG) over a faded copy of the new picture: changed pixels red, inserted rows
   * green, a changed region framed magenta, a removal an orange bar where the rows were, moved rows
   * a blue bar down the left edge; null when none differ.
   */
  diff: Buffer | null;
  /** Where the changes are, from the top of the page, in CSS px (picture px / `scale`). */
  regions: ChangeRegion[];
}

/** How comparePictures compares. */
export interface CompareOptions {
  /** Rectangles (CSS px, of the new picture) left out, or counted only past their tolerance. Default none. */
  masks?: MaskRect[];
  /** Picture px per CSS px (the capture's device scale factor). Default 1. */
  scale?: number;
}

/**
 * Per-channel colour distance under which two pixels count as equal (pixelmatch's YIQ-based
 * threshold; 0.1 is its default and ignores compression noise, not a changed word).
 */
const PIXEL_THRESHOLD = 0.1;
/** How much of the new picture shows under the red: faded, so the red stands out. */
const FADE = 0.2;
const RED: [number, number, number] = [255, 0, 0];
/**
 * Rows compared at a time. pixelmatch is synchronous: a 1920 × 10 000 picture in one call held
 * the event loop (HTTP answers, CDP messages) for about half a second; in bands it lets the
 * loop run between them.
 */
const BAND_ROWS = 256;
/**
 * Rows of context above and below a band: pixelmatch's anti-aliasing test reads pixels up to
 * two rows away (a pixel's neighbours, then theirs), so with these a band finds exactly what
 * one call over the whole picture finds.
 */
const BAND_MARGIN = 3;

/** pixelmatch's options, as comparePictures uses them. */
const MATCH_OPTIONS = {
  threshold: PIXEL_THRESHOLD,
  includeAA: false,
  alpha: FADE,
  diffColor: RED,
  aaColor: [255, 255, 255] as [number, number, number],
};

interface Picture {
  data: Buffer;
  width: number;
  height: number;
}

async function rgba(image: Buffer): Promise<Picture> {
  const { data, info } = await sharp(image, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * Compares the picture of a check with its baseline. Rows first: each row is hashed and the two
 * sequences of rows aligned (alignRows), so a block inserted near the top is `inserted` and the
 * content below it `moved`, not changed. Then pixels, between aligned rows only: pixelmatch with
 * its anti-aliasing detection (anti-aliased edges that moved by a pixel are not counted). Masks
 * apply to the pixels found. Pictures of another width count as wholly changed (difference 1).
 */
export async function comparePictures(baseline: Buffer, current: Buffer, options: CompareOptions = {}): Promise<PictureDifference> {
  const [before, after] = await Promise.all([rgba(baseline), rgba(current)]);
  const found = before.width === after.width ? await compareAligned(before, after) : otherWidth(before, after);
  const scale = options.scale ?? 1;
  for (const mask of options.masks ?? []) applyMask(found, after.width, mask, scale);
  const inPixels = regionsOf(found, after.width);
  const regions = inPixels.map((region) => ({ kind: region.kind, before: toCss(region.before, scale), after: toCss(region.after, scale) }));
  const differing = countMarked(found.marks) + found.removedPixels;
  const difference = found.wholly ? 1 : differing / (after.width * Math.max(before.height, after.height));
  if (difference === 0) return { difference: 0, diff: null, regions };
  return { difference, diff: await drawDiff(after, found, inPixels), regions };
}

/** Where a pixel of the new picture stands in the comparison. */
const enum Mark {
  Same = 0,
  Changed = 1,
  Inserted = 2,
}

/** A stretch of the alignment: rows of each picture (an empty range where it has none). */
interface Block {
  kind: 'same' | 'changed' | 'inserted' | 'removed';
  before: number;
  after: number;
  beforeRows: number;
  afterRows: number;
}

/** The comparison before masks and drawing: a mark per pixel of the new picture, and the blocks. */
interface Comparison {
  marks: Uint8Array;
  blocks: Block[];
  removedPixels: number;
  wholly: boolean;
}

async function compareAligned(before: Picture, after: Picture): Promise<Comparison> {
  const { width } = after;
  const runs = alignRows(hashRows(before.data, width, before.height), hashRows(after.data, width, after.height));
  const blocks: Block[] = [];
  let b = 0;
  let a = 0;
  for (const run of [...runs, { before: before.height, after: after.height, rows: 0 }]) {
    blocks.push(...between(b, run.before, a, run.after));
    if (run.rows > 0) blocks.push({ kind: 'same', before: run.before, after: run.after, beforeRows: run.rows, afterRows: run.rows });
    b = run.before + run.rows;
    a = run.after + run.rows;
  }
  const changes = blocks.filter((block) => !plainSpace(block, before, after));
  const marks = new Uint8Array(width * after.height);
  let removedPixels = 0;
  for (const block of changes) {
    if (block.kind === 'inserted') marks.fill(Mark.Inserted, block.after * width, (block.after + block.afterRows) * width);
    if (block.kind === 'removed') removedPixels += block.beforeRows * width;
    if (block.kind === 'changed') markChanged(await matchRows(before, after, block), marks, block.after * width);
  }
  return { marks, blocks: changes, removedPixels, wholly: false };
}

/**
 * Inserted or removed rows that are all plain (each row one colour): the page's empty space grew
 * or shrank, as when content grows into the white below it on a page shorter than the viewport.
 * Not a change: what moved is reported as moved.
 */
function plainSpace(block: Block, before: Picture, after: Picture): boolean {
  if (block.kind === 'inserted') return plainRows(after, block.after, block.afterRows);
  if (block.kind === 'removed') return plainRows(before, block.before, block.beforeRows);
  return false;
}

function plainRows(picture: Picture, top: number, rows: number): boolean {
  const { data, width } = picture;
  for (let y = top; y < top + rows; y++) {
    const first = y * width * 4;
    for (let i = first + 4, end = first + width * 4; i < end; i++) if (data[i] !== data[first + ((i - first) % 4)]) return false;
  }
  return true;
}

/** The rows between two runs: changed where both pictures have rows, the rest inserted or removed. */
function between(b: number, bEnd: number, a: number, aEnd: number): Block[] {
  const paired = Math.min(bEnd - b, aEnd - a);
  const blocks: Block[] = [];
  if (paired > 0) blocks.push({ kind: 'changed', before: b, after: a, beforeRows: paired, afterRows: paired });
  if (aEnd - a > paired) blocks.push({ kind: 'inserted', before: b + paired, after: a + paired, beforeRows: 0, afterRows: aEnd - a - paired });
  if (bEnd - b > paired) blocks.push({ kind: 'removed', before: b + paired, after: a + paired, beforeRows: bEnd - b - paired, afterRows: 0 });
  return blocks;
}

/**
 * pixelmatch over a changed block, with up to BAND_MARGIN rows of context above and below (the
 * rows above are equal in both pictures: a run ends there), as one call over the pictures would
 * see them. Returns pixelmatch's output for the block's rows.
 */
async function matchRows(before: Picture, after: Picture, block: Block): Promise<Uint8Array> {
  const rowBytes = after.width * 4;
  const above = Math.min(BAND_MARGIN, block.before, block.after);
  const below = Math.min(BAND_MARGIN, before.height - block.before - block.beforeRows, after.height - block.after - block.afterRows);
  const rows = above + block.afterRows + below;
  const slice = (picture: Picture, top: number) => picture.data.subarray((top - above) * rowBytes, (top - above + rows) * rowBytes);
  const output = new Uint8Array(rows * rowBytes);
  await matchInBands(slice(after, block.after), slice(before, block.before), output, after.width, rows);
  return output.subarray(above * rowBytes, (above + block.afterRows) * rowBytes);
}

function markChanged(output: Uint8Array, marks: Uint8Array, first: number): void {
  for (let i = 0, p = first; i < output.length; i += 4, p++) if (output[i] === RED[0] && output[i + 1] === RED[1] && output[i + 2] === RED[2]) marks[p] = Mark.Changed;
}

/** Pictures of another width (another device): the whole new picture is changed. */
function otherWidth(before: Picture, after: Picture): Comparison {
  const block: Block = { kind: 'changed', before: 0, after: 0, beforeRows: before.height, afterRows: after.height };
  return { marks: new Uint8Array(after.width * after.height).fill(Mark.Changed), blocks: [block], removedPixels: 0, wholly: true };
}

/**
 * Leaves a mask's pixels out: all of them without a tolerance; with one, only when no more than
 * that fraction of the rectangle's pixels differ.
 */
function applyMask(found: Comparison, width: number, mask: MaskRect, scale: number): void {
  const height = found.marks.length / width;
  const x0 = clamp(Math.floor(mask.x * scale), width);
  const x1 = clamp(Math.ceil((mask.x + mask.width) * scale), width);
  const y0 = clamp(Math.floor(mask.y * scale), height);
  const y1 = clamp(Math.ceil((mask.y + mask.height) * scale), height);
  if (x1 <= x0 || y1 <= y0) return;
  if (mask.tolerance !== undefined) {
    let differing = 0;
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (found.marks[y * width + x] !== Mark.Same) differing++;
    if (differing / ((x1 - x0) * (y1 - y0)) > mask.tolerance) return;
  }
  for (let y = y0; y < y1; y++) found.marks.fill(Mark.Same, y * width + x0, y * width + x1);
}

const clamp = (value: number, max: number) => Math.max(0, Math.min(max, value));

/**
 * The regions of the blocks, in picture px: a changed or inserted block spans the marked pixels
 * left in it after masks (none left, no region); moved and removed rows span the picture's width.
 */
function regionsOf(found: Comparison, width: number): ChangeRegion[] {
  const regions: ChangeRegion[] = [];
  for (const block of found.blocks) {
    if (block.kind === 'same') {
      if (block.before !== block.after) regions.push({ kind: 'moved', before: { x: 0, y: block.before, width, height: block.beforeRows }, after: { x: 0, y: block.after, width, height: block.afterRows } });
    } else if (block.kind === 'removed') {
      regions.push({ kind: 'removed', before: { x: 0, y: block.before, width, height: block.beforeRows }, after: null });
    } else {
      const box = markedBox(found.marks, width, block.after, block.afterRows);
      if (!box) continue;
      const before = block.kind === 'inserted' ? null : found.wholly ? { x: 0, y: 0, width, height: block.beforeRows } : { ...box, y: box.y - block.after + block.before };
      regions.push({ kind: block.kind, before, after: box });
    }
  }
  return regions;
}

/** The smallest rectangle holding the marked pixels of some rows, or null. */
function markedBox(marks: Uint8Array, width: number, top: number, rows: number): Rect | null {
  let x0 = width;
  let x1 = -1;
  let y0 = -1;
  let y1 = -1;
  for (let y = top; y < top + rows; y++) {
    const row = marks.subarray(y * width, (y + 1) * width);
    const first = row.findIndex((mark) => mark !== Mark.Same);
    if (first < 0) continue;
    let last = width - 1;
    while (row[last] === Mark.Same) last--;
    x0 = Math.min(x0, first);
    x1 = Math.max(x1, last);
    if (y0 < 0) y0 = y;
    y1 = y;
  }
  return y0 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

function toCss(rect: Rect | null, scale: number): Rect | null {
  if (!rect || scale === 1) return rect;
  const x = Math.floor(rect.x / scale);
  const y = Math.floor(rect.y / scale);
  return { x, y, width: Math.ceil((rect.x + rect.width) / scale) - x, height: Math.ceil((rect.y + rect.height) / scale) - y };
}

function countMarked(marks: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < marks.length; i++) if (marks[i] !== Mark.Same) n++;
  return n;
}

const GREEN: [number, number, number] = [0, 170, 60];
const ORANGE: [number, number, number] = [255, 140, 0];
const BLUE: [number, number, number] = [40, 90, 255];
const MAGENTA: [number, number, number] = [220, 0, 220];
/** How far from a changed region its frame is drawn, in picture px: clear of the pixels it frames. */
const FRAME_GAP = 3;
/** How much green is laid over an inserted row. */
const INSERTED_TINT = 0.45;
/** How thick a removal's bar and a moved block's bar are drawn, in picture px. */
const STROKE = 3;

/** The diff picture: the new picture faded to grey, then the marks and the regions drawn over it. */
async function drawDiff(after: Picture, found: Comparison, regions: ChangeRegion[]): Promise<Buffer> {
  const { width, height } = after;
  const output = Buffer.alloc(width * height * 4);
  for (let top = 0; top < height; top += BAND_ROWS) {
    for (let p = top * width, end = Math.min(height, top + BAND_ROWS) * width; p < end; p++) {
      const i = p * 4;
      const mark = found.marks[p];
      const grey = faded(after.data, i);
      if (mark === Mark.Same) {
        output[i] = output[i + 1] = output[i + 2] = grey;
      } else {
        const colour = mark === Mark.Changed ? RED : GREEN;
        const amount = mark === Mark.Changed ? 1 : INSERTED_TINT;
        for (let c = 0; c < 3; c++) output[i + c] = Math.round(grey * (1 - amount) + colour[c]! * amount);
      }
      output[i + 3] = 255;
    }
    // As in matchInBands: a tall picture does not hold the event loop while it is drawn.
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (const block of found.blocks) {
    if (block.kind === 'removed') fill(output, width, { x: 0, y: Math.max(0, block.after - 1), width, height: STROKE }, ORANGE);
    if (block.kind === 'same' && block.before !== block.after) fill(output, width, { x: 0, y: block.after, width: STROKE, height: block.afterRows }, BLUE);
  }
  for (const region of regions) if (region.kind === 'changed' && !found.wholly) frame(output, width, region.after!, MAGENTA);
  return sharp(output, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 6 }).toBuffer();
}

/** A pixel as pixelmatch fades it under its marks: its brightness, mostly washed to white. */
function faded(data: Uint8Array, i: number): number {
  const y = data[i]! * 0.29889531 + data[i + 1]! * 0.58662247 + data[i + 2]! * 0.11448223;
  return 255 + ((y - 255) * FADE * data[i + 3]!) / 255;
}

function fill(output: Buffer, width: number, rect: Rect, colour: [number, number, number]): void {
  const height = output.length / 4 / width;
  const [x0, x1] = [Math.max(0, rect.x), Math.min(width, rect.x + rect.width)];
  for (let y = Math.max(0, rect.y), end = Math.min(height, rect.y + rect.height); y < end; y++) {
    for (let i = (y * width + x0) * 4, last = (y * width + x1) * 4; i < last; i += 4) {
      output[i] = colour[0];
      output[i + 1] = colour[1];
      output[i + 2] = colour[2];
    }
  }
}

/** A one-pixel frame FRAME_GAP px around a rectangle. */
function frame(output: Buffer, width: number, rect: Rect, colour: [number, number, number]): void {
  const x = rect.x - FRAME_GAP;
  const y = rect.y - FRAME_GAP;
  const w = rect.width + 2 * FRAME_GAP;
  const h = rect.height + 2 * FRAME_GAP;
  fill(output, width, { x, y, width: w, height: 1 }, colour);
  fill(output, width, { x, y: y + h - 1, width: w, height: 1 }, colour);
  fill(output, width, { x, y, width: 1, height: h }, colour);
  fill(output, width, { x: x + w - 1, y, width: 1, height: h }, colour);
}


/**
 * pixelmatch over bands of BAND_ROWS rows (each with BAND_MARGIN rows of context), yielding to
 * the event loop between bands; the output and the count are those of one call over the whole
 * picture. Returns the number of differing pixels.
 */
export async function matchInBands(current: Uint8Array, baseline: Uint8Array, output: Uint8Array, width: number, height: number): Promise<number> {
  const rowBytes = width * 4;
  let differing = 0;
  for (let top = 0; top < height; top += BAND_ROWS) {
    const bottom = Math.min(height, top + BAND_ROWS);
    const from = Math.max(0, top - BAND_MARGIN);
    const to = Math.min(height, bottom + BAND_MARGIN);
    const band = Buffer.alloc((to - from) * rowBytes);
    pixelmatch(current.subarray(from * rowBytes, to * rowBytes), baseline.subarray(from * rowBytes, to * rowBytes), band, width, to - from, MATCH_OPTIONS);
    const core = band.subarray((top - from) * rowBytes, (bottom - from) * rowBytes);
    output.set(core, top * rowBytes);
    differing += countRed(core);
    if (bottom < height) await new Promise((resolve) => setImmediate(resolve));
  }
  return differing;
}

/** The pixels painted as differing: pure red (a faded pixel is grey, an anti-aliased one white). */
function countRed(pixels: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < pixels.length; i += 4) if (pixels[i] === RED[0] && pixels[i + 1] === RED[1] && pixels[i + 2] === RED[2]) n++;
  return n;
}

