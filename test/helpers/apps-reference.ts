import type { Browser } from 'playwright-core';

import { type Preset, userAgentFor } from '../../server/capture/presets.js';
import { CHANNEL_TOLERANCE, type Pixels } from './corpus-reference.js';

/** A page of a running app, and how a person tells it has finished drawing. */
export interface AppView {
  /** The page's path and query on the app, e.g. "/classic/graph?g0.expr=up". */
  path: string;
  /**
   * Runs in the page; true once what a person waits for is on screen (the chart's path drawn, the
   * gauges showing numbers, no loading text). Polled every 100 ms after `load`.
   */
  drawn: () => boolean;
  /** The parts that must be drawn (selectors); the drawn share is measured over their boxes. */
  parts: string[];
}

/** A rectangle of the viewport, in CSS pixels. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface AppReference {
  png: Buffer;
  /** From `load` to the moment `drawn` held, ms. */
  drawnAfterMs: number;
  /** The boxes of the view's parts in the viewport (cut to it), as the reference drew them. */
  boxes: Box[];
}

/** How long a person looks after the app has drawn before they call it done: one more refresh. */
export const GRACE_MS = 1_000;
/** The longest an app may take to draw in the reference before the case fails. */
const DRAWN_TIMEOUT_MS = 30_000;

/**
 * The app as a person sees it: plain playwright-core with the preset (as referenceCapture in
 * corpus-reference.ts), `goto` until `load`, then until the view's `drawn` holds, then GRACE_MS,
 * then `page.screenshot()` of the viewport.
 */
export async function appReference(browser: Browser, url: string, preset: Preset, view: AppView): Promise<AppReference> {
  const context = await browser.newContext({
    viewport: { width: preset.width, height: preset.height },
    deviceScaleFactor: preset.deviceScaleFactor,
    isMobile: preset.isMobile,
    hasTouch: preset.hasTouch,
    userAgent: userAgentFor(preset, false, browser.version()),
  });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    const loaded = Date.now();
    await page.waitForFunction(view.drawn, undefined, { polling: 100, timeout: DRAWN_TIMEOUT_MS });
    const drawnAfterMs = Date.now() - loaded;
    await page.waitForTimeout(GRACE_MS);
    const boxes = await page.evaluate((parts) => {
      const cut = (r: DOMRect) => {
        const x = Math.max(0, r.left);
        const y = Math.max(0, r.top);
        return { x, y, width: Math.min(innerWidth, r.right) - x, height: Math.min(innerHeight, r.bottom) - y };
      };
      return parts
        .flatMap((selector) => [...document.querySelectorAll(selector)])
        .map((element) => cut(element.getBoundingClientRect()))
        .filter((box) => box.width >= 1 && box.height >= 1);
    }, view.parts);
    const png = await page.screenshot({ type: 'png', timeout: 30_000 });
    return { png, drawnAfterMs, boxes };
  } finally {
    await context.close().catch(() => undefined);
  }
}

/**
 * The "ink" of a box: its pixels that differ by more than CHANNEL_TOLERANCE in a channel from the
 * box's commonest colour (its background). A drawn chart's line, a gauge's arc and figures, a
 * list's rows are ink; empty axes' faint grid and a blank panel are not.
 */
export function inkIn(picture: Pixels, box: Box, scale: number): number {
  const left = Math.max(0, Math.floor(box.x * scale));
  const top = Math.max(0, Math.floor(box.y * scale));
  const right = Math.min(picture.width, Math.ceil((box.x + box.width) * scale));
  const bottom = Math.min(picture.height, Math.ceil((box.y + box.height) * scale));
  if (right <= left || bottom <= top) return 0;
  const counts = new Map<number, number>();
  for (let y = top; y < bottom; y += 2) {
    for (let x = left; x < right; x += 2) {
      const at = (y * picture.width + x) * 3;
      const colour = (picture.data[at]! << 16) | (picture.data[at + 1]! << 8) | picture.data[at + 2]!;
      counts.set(colour, (counts.get(colour) ?? 0) + 1);
    }
  }
  let background = 0;
  let most = -1;
  for (const [colour, count] of counts) {
    if (count > most) [background, most] = [colour, count];
  }
  const [r, g, b] = [background >> 16, (background >> 8) & 0xff, background & 0xff];
  let ink = 0;
  for (let y = top; y < bottom; y++) {
    for (let x = left; x < right; x++) {
      const at = (y * picture.width + x) * 3;
      if (
        Math.abs(picture.data[at]! - r) > CHANNEL_TOLERANCE ||
        Math.abs(picture.data[at + 1]! - g) > CHANNEL_TOLERANCE ||
        Math.abs(picture.data[at + 2]! - b) > CHANNEL_TOLERANCE
      ) {
        ink++;
      }
    }
  }
  return ink;
}

/**
 * How much of what the reference drew in the view's parts the service's picture drew too: the ink
 * of the service's picture over the reference's, summed over the boxes, at most 1. A live app
 * never draws the same figures twice, so the pictures cannot match pixel for pixel; but a drawn
 * chart, gauge or list has about as much ink as the reference's, and one not drawn yet has little.
 */
export function drawnShare(service: Pixels, reference: Pixels, boxes: Box[], scale: number): number {
  const sum = (picture: Pixels) => boxes.reduce((total, box) => total + inkIn(picture, box, scale), 0);
  const referenceInk = sum(reference);
  return referenceInk === 0 ? 1 : Math.min(1, sum(service) / referenceInk);
}
