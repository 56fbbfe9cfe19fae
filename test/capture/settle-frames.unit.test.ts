// The frame comparison of the wait for a settled page (FrameWatch): frames made here, cell by
// cell, at the times given, with no browser.
import { describe, expect, it } from 'vitest';

import { FrameWatch } from '../../server/capture/pipeline/settle.js';

const WIDTH = 64;
const HEIGHT = 48;
const clip = { x: 0, y: 100, width: 256, height: 192 };

/** A grey frame at `at` ms with the rectangles given painted in a shade of `tone`. */
function frame(at: number, painted: Array<{ x: number; y: number; width: number; height: number; tone: number }> = []) {
  const data = Buffer.alloc(WIDTH * HEIGHT * 3, 200);
  for (const r of painted) {
    for (let y = r.y; y < r.y + r.height; y++) for (let x = r.x; x < r.x + r.width; x++) data.fill(r.tone, (y * WIDTH + x) * 3, (y * WIDTH + x) * 3 + 3);
  }
  return { data, width: WIDTH, height: HEIGHT, at, clip, cssPerPixel: clip.width / WIDTH };
}

describe('the frames of a page waiting to settle', () => {
  it('are settled once they have agreed for 500 ms, not before', () => {
    const watch = new FrameWatch();
    for (let at = 0; at <= 400; at += 100) watch.add(frame(at));
    expect(watch.settled()).toBe(false);
    watch.add(frame(500));
    expect(watch.settled()).toBe(true);
  });

  it('are not settled while a region changes, and say where in CSS px of the page and for how long', () => {
    const watch = new FrameWatch();
    for (let at = 0; at <= 1_000; at += 100) watch.add(frame(at, [{ x: 8, y: 16, width: 16, height: 8, tone: at % 200 === 0 ? 0 : 90 }]));
    expect(watch.settled()).toBe(false);
    // Frame px × 4 CSS px, from the clip's corner (0, 100).
    expect(watch.changing()).toEqual({ x: 32, y: 164, width: 64, height: 32, forMs: 900 });
  });

  it('leave out a small region that keeps changing on its own for 1.5 s (a clock), and name it', () => {
    const watch = new FrameWatch();
    for (let at = 0; at <= 1_700; at += 100) watch.add(frame(at, [{ x: 56, y: 0, width: 8, height: 8, tone: (at / 100) % 2 ? 0 : 90 }]));
    expect(watch.settled()).toBe(true);
    expect(watch.onItsOwn()).toEqual([{ x: 224, y: 100, width: 32, height: 32 }]);
  });

  it('do not leave out a region that changes over more than a quarter of the frame (the page itself moving)', () => {
    const watch = new FrameWatch();
    for (let at = 0; at <= 2_000; at += 100) watch.add(frame(at, [{ x: 0, y: 0, width: 64, height: 24, tone: (at / 100) % 2 ? 0 : 90 }]));
    expect(watch.settled()).toBe(false);
    expect(watch.onItsOwn()).toEqual([]);
  });

  it('leave out regions of any size that change on their own with pauses between (charts refreshed every second, in turn)', () => {
    const watch = new FrameWatch();
    // Four bands of the whole width, each redrawn once a second, a quarter of a second apart: the
    // picture changes every 250 ms somewhere, each band pauses a second.
    const bands = (at: number) => [0, 1, 2, 3].map((i) => ({ x: 0, y: i * 12, width: 64, height: 12, tone: Math.floor((at - i * 250) / 1_000) % 2 ? 0 : 90 }));
    for (let at = 0; at <= 3_200; at += 100) watch.add(frame(at, bands(at)));
    expect(watch.settled()).toBe(true);
    expect(watch.onItsOwn()).toEqual([{ x: 0, y: 100, width: 256, height: 192 }]);
  });

  it('start again when the frame moves (the page scrolled) or changes size', () => {
    const watch = new FrameWatch();
    for (let at = 0; at <= 600; at += 100) watch.add(frame(at));
    expect(watch.settled()).toBe(true);
    watch.add({ ...frame(700), clip: { ...clip, y: 400 } });
    expect(watch.settled()).toBe(false);
  });
});
