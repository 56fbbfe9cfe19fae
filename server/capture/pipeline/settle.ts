import sharp from 'sharp';

import { sleep } from '../../deadline.js';
import { type PageActivity, pageActivity } from '../in-page/settle-signals.js';
import { probeArguments, probePage } from '../in-page/warning-probe.js';
import { evaluate, type PageDriver } from './page-driver.js';
import type { SettleRegion, SettleReport } from './settle-report.js';

// The wait for a settled page (`wait_until: settled`): after `load`, until the page's fonts are
// loaded, its network has quieted (connections open by design left out: PageTraffic), the work
// it put off for a moment has run (settle-signals.ts), and its picture has stopped changing — cheap low-resolution frames of the area to be captured, taken
// until consecutive frames agree but for regions that keep changing on their own (a clock, a
// live counter, a spinner) — or until the cap, when the picture is taken anyway and the report
// says what still moved.

/** Time between two frames (plus the frame's own). */
const FRAME_EVERY_MS = 100;
/** The picture is settled when its frames agreed (regions changing on their own aside) for this long. */
const STABLE_MS = 500;
/** The document's changes and the page's signals are read this often while no frame is needed. */
const POLL_MS = 50;
/** A frame's width in pixels: enough to see a chart drawn or a value changed, cheap to take and compare. */
const FRAME_WIDTH = 256;
/** Side of the cells frames are compared by, in frame pixels. */
const CELL = 8;
/** A channel differing by more than this is a change (not the noise of a scaled frame). */
const CHANNEL_TOLERANCE = 6;
/** Changes in at least this many frames make a cell one that may change on its own. */
const ON_ITS_OWN_CHANGES = 3;
/**
 * A cell that pauses — it stayed the same in at least PAUSING_SHARE of the frames between its
 * first change and its last (a dashboard's refresh every second, a clock, a blinking caret) —
 * changes on its own once it has done so for PAUSING_MS, and is left out however large the region.
 * Counted in frames, not in ms, so a slow machine's longer gaps between frames do not make a
 * restless cell look like one that pauses.
 */
const PAUSING_SHARE = 0.2;
const PAUSING_MS = 1_000;
/**
 * A cell that never pauses (a spinner, an animation) changes on its own once it has done so for
 * RESTLESS_MS, and is left out only while such cells cover at most RESTLESS_MAX_SHARE of the
 * frame: a chart's drawing animation (a second at most) is waited for.
 */
const RESTLESS_MS = 1_500;
const RESTLESS_MAX_SHARE = 1 / 4;

/** What the wait reads of the page's network (PageTraffic). */
export interface SettlingNetwork {
  markSettleStart(): void;
  networkSettled(): { settled: boolean; busy: string[] };
}

/** The area to watch, in CSS px of the document; null for the viewport. */
export type WatchedArea = SettleRegion | null;

/**
 * Waits until the page behind `driver` has settled, or `capMs` has passed, and reports how it
 * ended. A page that does nothing after `load` (fonts loaded, no request, no change to its
 * document, nothing in view that draws itself) is settled at once, without a frame. `dpr` is the
 * device pixel ratio the page is emulated with (a frame's pixels are CSS px × scale × dpr).
 */
export async function waitUntilSettled(
  driver: PageDriver,
  network: SettlingNetwork,
  input: { capMs: number; dpr: number; area: WatchedArea; viewport: { width: number; height: number } },
): Promise<SettleReport> {
  const started = Date.now();
  const until = started + input.capMs;
  network.markSettleStart();
  const frames = new FrameWatch();
  let first: PageActivity | null = null;
  let activity: PageActivity;
  let net: { settled: boolean; busy: string[] };
  let loading = false;
  for (;;) {
    // A page that broke what pageActivity calls is watched by its frames alone, over the preset's viewport.
    activity = await evaluate(driver, pageActivity, null).catch(() => unknownActivity(first, input.viewport));
    first ??= activity;
    net = network.networkSettled();
    const changedSinceLoad = activity.changes.count > first.changes.count;
    const needsFrames = frames.started || activity.drawsItself || changedSinceLoad;
    if (needsFrames) await frames.take(driver, clipOf(input.area, activity.viewport), input.dpr);
    // Work the page put off for a moment (a timeout of up to a second, a frame it asked for) may
    // still draw: not settled before it ran.
    const putOff = activity.changes.timeouts + activity.changes.frames > 0;
    const pictureSettled = !putOff && (needsFrames ? frames.settled() : true);
    // Last, the page must not show loading states (the verdict's placeholders: a gauge showing
    // "-", a spinner, a skeleton): an app that asks for its data late is not drawn yet.
    loading = activity.fontsReady && net.settled && pictureSettled && (await showsLoadingStates(driver, clipOf(input.area, activity.viewport)));
    if (activity.fontsReady && net.settled && pictureSettled && !loading) break;
    if (Date.now() >= until) break;
    await sleep(Math.min(needsFrames ? FRAME_EVERY_MS : POLL_MS, Math.max(0, until - Date.now())));
  }
  const holding: SettleReport['holding'] = [];
  if (!activity.fontsReady) holding.push('fonts');
  if (!net.settled) holding.push('network');
  const changing = frames.started && !frames.settled() ? frames.changing() : null;
  if (changing || loading || activity.changes.timeouts + activity.changes.frames > 0) holding.push('picture');
  return {
    settled: holding.length === 0,
    waitedMs: Date.now() - started,
    capMs: input.capMs,
    holding,
    changing,
    ignored: frames.started ? frames.onItsOwn() : [],
    busy: net.busy.slice(0, 3),
  };
}

/** Whether the area shows loading states (warning-probe.ts: placeholders); a page that broke the probe shows none. */
async function showsLoadingStates(driver: PageDriver, area: SettleRegion): Promise<boolean> {
  const probe = await evaluate(driver, probePage, probeArguments({ ...area, overlay: false, blocked: [] })).catch(() => null);
  return (probe?.placeholders.count ?? 0) > 0;
}

/** What is assumed of a page whose activity could not be read: nothing is known, so its frames decide. */
function unknownActivity(first: PageActivity | null, viewport: { width: number; height: number }): PageActivity {
  return {
    fontsReady: true,
    changes: first?.changes ?? { count: 0, sinceMs: 0, sinceLoopMs: 1e9, timeouts: 0, frames: 0 },
    drawsItself: true,
    viewport: first?.viewport ?? { x: 0, y: 0, ...viewport },
  };
}

/** The frame's clip: the area asked for where it meets the viewport, else the viewport. */
function clipOf(area: WatchedArea, viewport: PageActivity['viewport']): SettleRegion {
  if (!area) return viewport;
  const x = Math.max(area.x, viewport.x);
  const y = Math.max(area.y, viewport.y);
  const right = Math.min(area.x + area.width, viewport.x + viewport.width);
  const bottom = Math.min(area.y + area.height, viewport.y + viewport.height);
  return right - x >= 1 && bottom - y >= 1 ? { x, y, width: right - x, height: bottom - y } : viewport;
}

/** A frame decoded: its pixels (RGB), its size in pixels, and CSS px per pixel. */
interface Frame {
  data: Buffer;
  width: number;
  height: number;
  at: number;
  clip: SettleRegion;
  cssPerPixel: number;
}

/** What the frames showed of each cell: how often it changed, first and last (times, and frame numbers). */
interface CellHistory {
  changes: number;
  first: number;
  last: number;
  firstFrame: number;
  lastFrame: number;
}

/**
 * The frames taken so far, compared cell by cell: which cells changed and when, which change on
 * their own, and whether the picture has been the same (those aside) for STABLE_MS.
 */
export class FrameWatch {
  private previous: Frame | null = null;
  private firstAt = 0;
  /** Frames compared so far (pairs of a frame and the one before it). */
  private compared = 0;
  private readonly cells = new Map<number, CellHistory>();
  private columns = 0;
  private rows = 0;

  get started(): boolean {
    return this.previous !== null;
  }

  /** Takes a frame of `clip` and compares it with the one before. */
  async take(driver: PageDriver, clip: SettleRegion, dpr: number): Promise<void> {
    const scale = Math.min(1, FRAME_WIDTH / Math.max(1, clip.width * dpr));
    const { data: png } = await driver.send('Page.captureScreenshot', {
      format: 'png',
      optimizeForSpeed: true,
      captureBeyondViewport: false,
      clip: { ...clip, scale },
    });
    const { data, info } = await sharp(Buffer.from(png, 'base64')).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    this.add({ data, width: info.width, height: info.height, at: Date.now(), clip, cssPerPixel: clip.width / info.width });
  }

  /** Adds a decoded frame (take's second half; a unit test's way in). */
  add(frame: Frame): void {
    const previous = this.previous;
    this.previous = frame;
    if (!previous || previous.width !== frame.width || previous.height !== frame.height || !sameClip(previous.clip, frame.clip)) {
      // The first frame, or one of another size or place (the page scrolled or resized): start again.
      this.cells.clear();
      this.compared = 0;
      this.firstAt = frame.at;
      this.columns = Math.ceil(frame.width / CELL);
      this.rows = Math.ceil(frame.height / CELL);
      return;
    }
    const n = ++this.compared;
    for (const cell of changedCells(previous, frame, this.columns)) {
      const history = this.cells.get(cell);
      if (history) {
        history.changes++;
        history.last = frame.at;
        history.lastFrame = n;
      } else this.cells.set(cell, { changes: 1, first: frame.at, last: frame.at, firstFrame: n, lastFrame: n });
    }
  }

  /** Whether the frames agreed, cells that change on their own aside, for STABLE_MS. */
  settled(): boolean {
    const last = this.previous;
    if (!last || last.at - this.firstAt < STABLE_MS) return false;
    const ignored = this.ignoredCells();
    for (const [cell, history] of this.cells) {
      if (!ignored.has(cell) && last.at - history.last < STABLE_MS) return false;
    }
    return true;
  }

  /** Where the picture was still changing (cells that changed within STABLE_MS, not on their own), and for how long. */
  changing(): (SettleRegion & { forMs: number }) | null {
    const last = this.previous;
    if (!last) return null;
    const ignored = this.ignoredCells();
    const moving = [...this.cells].filter(([cell, history]) => !ignored.has(cell) && last.at - history.last < STABLE_MS);
    if (moving.length === 0) return null;
    const box = this.boxOf(moving.map(([cell]) => cell));
    return { ...box, forMs: last.at - Math.min(...moving.map(([, history]) => history.first)) };
  }

  /** The regions left out because they kept changing on their own, one box per group of touching cells. */
  onItsOwn(): SettleRegion[] {
    const ignored = this.ignoredCells();
    const regions: SettleRegion[] = [];
    const left = new Set(ignored);
    for (const start of ignored) {
      if (!left.has(start)) continue;
      const group: number[] = [];
      const stack = [start];
      left.delete(start);
      while (stack.length > 0) {
        const cell = stack.pop()!;
        group.push(cell);
        const column = cell % this.columns;
        for (const next of [cell - this.columns, cell + this.columns, column > 0 ? cell - 1 : -1, column < this.columns - 1 ? cell + 1 : -1]) {
          if (next >= 0 && left.has(next)) {
            left.delete(next);
            stack.push(next);
          }
        }
      }
      regions.push(this.boxOf(group));
    }
    return regions.slice(0, 10);
  }

  /**
   * Cells that change on their own: those that paused between changes (PAUSING_SHARE) for
   * PAUSING_MS, and those that did not for RESTLESS_MS while they cover at most RESTLESS_MAX_SHARE
   * of the frame.
   */
  private ignoredCells(): Set<number> {
    const pausing = new Set<number>();
    const restless = new Set<number>();
    for (const [cell, history] of this.cells) {
      if (history.changes < ON_ITS_OWN_CHANGES) continue;
      const frames = history.lastFrame - history.firstFrame + 1;
      const lasted = history.last - history.first;
      if (history.changes <= frames * (1 - PAUSING_SHARE)) {
        if (lasted >= PAUSING_MS) pausing.add(cell);
      } else if (lasted >= RESTLESS_MS) restless.add(cell);
    }
    if (restless.size <= this.columns * this.rows * RESTLESS_MAX_SHARE) for (const cell of restless) pausing.add(cell);
    return pausing;
  }

  /** The box around cells, in CSS px of the document. */
  private boxOf(cells: number[]): SettleRegion {
    const frame = this.previous!;
    const columns = cells.map((cell) => cell % this.columns);
    const rows = cells.map((cell) => Math.floor(cell / this.columns));
    const px = (n: number) => Math.round(n * CELL * frame.cssPerPixel);
    const x = Math.min(...columns);
    const y = Math.min(...rows);
    return {
      x: Math.round(frame.clip.x) + px(x),
      y: Math.round(frame.clip.y) + px(y),
      width: Math.min(px(Math.max(...columns) + 1 - x), Math.round(frame.clip.width)),
      height: Math.min(px(Math.max(...rows) + 1 - y), Math.round(frame.clip.height)),
    };
  }
}

function sameClip(a: SettleRegion, b: SettleRegion): boolean {
  return Math.abs(a.x - b.x) < 1 && Math.abs(a.y - b.y) < 1 && Math.abs(a.width - b.width) < 1 && Math.abs(a.height - b.height) < 1;
}

/** The cells (row × columns + column) in which two frames of one size differ. */
function changedCells(a: Frame, b: Frame, columns: number): Set<number> {
  const changed = new Set<number>();
  const rowBytes = a.width * 3;
  for (let y = 0; y < a.height; y++) {
    const row = y * rowBytes;
    // Most rows are the same: one comparison of the row, then the pixels only of a row that is not.
    if (a.data.compare(b.data, row, row + rowBytes, row, row + rowBytes) === 0) continue;
    for (let x = 0; x < a.width; x++) {
      const cell = Math.floor(y / CELL) * columns + Math.floor(x / CELL);
      if (changed.has(cell)) continue;
      const i = row + x * 3;
      if (
        Math.abs(a.data[i]! - b.data[i]!) > CHANNEL_TOLERANCE ||
        Math.abs(a.data[i + 1]! - b.data[i + 1]!) > CHANNEL_TOLERANCE ||
        Math.abs(a.data[i + 2]! - b.data[i + 2]!) > CHANNEL_TOLERANCE
      ) {
        changed.add(cell);
      }
    }
  }
  return changed;
}
