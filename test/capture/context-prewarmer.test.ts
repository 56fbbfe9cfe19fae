// Ready contexts per kind of job, in real Chromium: a steady stream of one kind finds `size`
// ready, three kinds in turn (a request for all devices) each find theirs, and a job of another
// kind throws nothing away.
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { ContextPrewarmer, type JobContextOptions, type JobPage } from '../../server/capture/chromium/context-prewarmer.js';
import { type Preset, PRESETS } from '../../server/capture/presets.js';
import { silentLogger } from '../../server/logger.js';

const kind = (preset: Preset): JobContextOptions => ({
  viewport: { width: preset.width, height: preset.height },
  deviceScaleFactor: preset.deviceScaleFactor,
  isMobile: preset.isMobile,
  hasTouch: preset.hasTouch,
  userAgent: `prewarmer-test ${preset.name}`,
});
const DESKTOP = kind(PRESETS.desktop);
const TABLET = kind(PRESETS.tablet);
const MOBILE = kind(PRESETS.mobile);
/** Making and closing contexts takes longer than expect.poll's default second on a busy machine. */
const POLL_MS = 10_000;

describe('ContextPrewarmer', () => {
  let browser: Browser;
  let prewarmer: ContextPrewarmer | undefined;
  const taken: JobPage[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
  });

  afterEach(async () => {
    prewarmer?.dispose();
    prewarmer = undefined;
    await Promise.all(taken.splice(0).map((job) => job.context.close()));
    await expect.poll(() => browser.contexts().length, { timeout: POLL_MS }).toBe(0);
  });

  afterAll(async () => {
    await browser?.close();
  });

  /**
   * Waits until the open contexts are ready spares of exactly these kinds (each with its page,
   * told apart by viewport), and returns them. Counting contexts is not enough: a discarded
   * spare is closed only once it is ready, and a spare still being made is not listed yet.
   */
  const sparesOnceReady = async (...kinds: JobContextOptions[]): Promise<Set<BrowserContext>> => {
    const viewports = () => browser.contexts().map((context) => JSON.stringify(context.pages()[0]?.viewportSize() ?? null)).sort();
    await expect.poll(viewports, { timeout: POLL_MS }).toEqual(kinds.map((k) => JSON.stringify(k.viewport)).sort());
    return new Set(browser.contexts());
  };

  /** Takes a context for `options`, noting whether it was one made before the call. */
  const take = async (options: JobContextOptions, before: Set<BrowserContext>) => {
    const job = await prewarmer!.take(options);
    taken.push(job);
    expect(job.page.viewportSize()).toEqual(options.viewport);
    return before.has(job.context);
  };

  it('keeps `size` ready for a stream of one kind, and replaces what is taken', async () => {
    prewarmer = new ContextPrewarmer(browser, 2, silentLogger);
    prewarmer.prepare(DESKTOP);
    expect(prewarmer.sparesFor(DESKTOP)).toBe(2);
    const before = await sparesOnceReady(DESKTOP, DESKTOP);
    expect(await take(DESKTOP, before)).toBe(true);
    expect(await take(DESKTOP, before)).toBe(true);
    expect(await take(DESKTOP, before)).toBe(false); // none left: made on the spot
    prewarmer.prepare(DESKTOP);
    expect(prewarmer.sparesFor(DESKTOP)).toBe(2);
  });

  it('keeps one of each of three kinds taken in turn, so each finds its own', async () => {
    prewarmer = new ContextPrewarmer(browser, 2, silentLogger);
    for (const options of [DESKTOP, TABLET, MOBILE]) prewarmer.prepare(options);
    // Two desktop, then one tablet, then the mobile one takes the oldest desktop's place.
    expect([DESKTOP, TABLET, MOBILE].map((o) => prewarmer!.sparesFor(o))).toEqual([1, 1, 1]);
    const before = await sparesOnceReady(DESKTOP, TABLET, MOBILE);
    for (const options of [DESKTOP, TABLET, MOBILE]) expect(await take(options, before)).toBe(true);
  });

  it('keeps its spares when a job of another kind comes', async () => {
    prewarmer = new ContextPrewarmer(browser, 2, silentLogger);
    prewarmer.prepare(DESKTOP);
    const before = await sparesOnceReady(DESKTOP, DESKTOP);
    expect(await take(MOBILE, before)).toBe(false);
    expect(prewarmer.sparesFor(DESKTOP)).toBe(2);
    expect(await take(DESKTOP, before)).toBe(true);
  });

  it('keeps none with size 0, and none after dispose', async () => {
    prewarmer = new ContextPrewarmer(browser, 0, silentLogger);
    prewarmer.prepare(DESKTOP);
    expect(prewarmer.sparesFor(DESKTOP)).toBe(0);
    prewarmer = new ContextPrewarmer(browser, 2, silentLogger);
    prewarmer.prepare(DESKTOP);
    await sparesOnceReady(DESKTOP, DESKTOP);
    prewarmer.dispose();
    prewarmer.prepare(DESKTOP);
    expect(prewarmer.sparesFor(DESKTOP)).toBe(0);
    await sparesOnceReady();
  });
});
