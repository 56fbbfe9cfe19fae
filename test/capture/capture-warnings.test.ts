// Every capture's verdict: the warnings the pipeline gives a picture of a page with a problem,
// and none for a clean page. Real Chromium through the ChromiumEngine, the fixture server's
// /warn/ pages (test/fixtures/warning-pages.ts).
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import type { CaptureRequest } from '../../server/capture/engine.js';
import { NOTHING_PROBED } from '../../server/capture/in-page/warning-probe.js';
import { captureWarnings, oneColour } from '../../server/capture/outputs/capture-warnings.js';
import type { Cut } from '../../server/capture/pipeline/capture-clip.js';
import type { SettleReport } from '../../server/capture/pipeline/settle-report.js';
import { PRESETS } from '../../server/capture/presets.js';
import { HOST_RESOLVER_RULES } from '../fixtures/blocking-pages.js';
import { LOADING_STATES } from '../fixtures/warning-pages.js';
import { engineWithFixtures } from '../helpers/capture-engine.js';
import { captureRequest } from './conformance-cases.js';

describe('the warnings of a capture', () => {
  // The ad and consent pages load from ad servers' names, mapped to the fixture server.
  const setup = engineWithFixtures({ extraArgs: [`--host-resolver-rules=${HOST_RESOLVER_RULES}`] });
  const capture = (path: string, overrides: Partial<CaptureRequest> = {}) => setup.engine.capture(captureRequest(setup.fixture.url, path, overrides));
  const codes = (warnings: Array<{ code: string }>) => warnings.map((w) => w.code);

  it('gives none for a clean page: text, a loaded image, a loaded web font, a small fixed header', async () => {
    const result = await capture('/warn/clean.html');
    expect(result.warnings).toEqual([]);
    const full = await capture('/warn/clean.html', { fullPage: true });
    expect(full.warnings).toEqual([]);
  });

  it('says blank when the picture is one colour, with the colour', async () => {
    const result = await capture('/warn/blank.html');
    expect(result.warnings).toEqual([{ code: 'blank', message: expect.stringContaining('#ffffff') }]);
  });

  it('says blank for a JPEG and a WebP of a blank page too', async () => {
    for (const format of ['jpeg', 'webp'] as const) {
      const result = await capture('/warn/blank.html', { format });
      expect(codes(result.warnings)).toEqual(['blank']);
    }
  });

  it('counts the images in the picture that failed to load, and not those below it', async () => {
    const result = await capture('/warn/broken-images.html');
    expect(codes(result.warnings)).toEqual(['images_not_loaded']);
    expect(result.warnings[0]!.message).toMatch(/^2 images in the picture are missing: 2 failed to load \(first: .*\/warn\/missing\.png\?a\)/);
    // A full page shows the third one too.
    const full = await capture('/warn/broken-images.html', { fullPage: true });
    expect(full.warnings[0]!.message).toMatch(/^3 images in the picture/);
  });

  it('counts an image still loading at capture', async () => {
    const result = await capture('/stalled-image.html', { navigationTimeoutMs: 3_000 });
    expect(codes(result.warnings)).toEqual(['images_not_loaded', 'network_busy']);
    expect(result.warnings[0]!.message).toMatch(/^1 image in the picture is missing: 1 had not finished loading \(first: .*\/hang\)/);
  });

  it('names the web fonts that failed to load', async () => {
    const result = await capture('/warn/font-fails.html');
    expect(result.warnings).toEqual([{ code: 'fonts_not_loaded', message: expect.stringContaining('"Missing" failed to load') }]);
  });

  it('says overlay when a fixed element covers more than a third of the viewport, naming it', async () => {
    const result = await capture('/warn/overlay.html');
    expect(codes(result.warnings)).toEqual(['overlay']);
    expect(result.warnings[0]!.message).toMatch(/^A fixed element \(div#consent\) covers (5[0-9]|6[0-9])% of the viewport/);
  });

  it('says overlay for a consent dialog built like OneTrust\'s, and not once block_cookie_banners took it away', async () => {
    const shown = await capture('/blocking/onetrust.html');
    expect(codes(shown.warnings)).toEqual(['overlay']);
    // The dialog's dark backdrop is the largest fixed element over the page.
    expect(shown.warnings[0]!.message).toMatch(/^A fixed element \(div\.onetrust-pc-dark-filter.*\) covers \d+% of the viewport/);
    const dismissed = await capture('/blocking/onetrust.html', { options: { blockCookieBanners: true } });
    expect(codes(dismissed.warnings)).not.toContain('overlay');
  });

  it('says overlay for a dialog on a backdrop over a short page, which has little content under it', async () => {
    const result = await capture('/warn/short-dialog.html');
    expect(result.warnings).toEqual([
      { code: 'overlay', message: "A fixed element (div#backdrop) covers 100% of the viewport and hides 100% of the page's content in it: a dialog or banner may hide the page." },
    ]);
  });

  it('says no overlay for a fixed header or a fixed sidebar beside a short page', async () => {
    expect((await capture('/warn/fixed-header.html')).warnings).toEqual([]);
    expect((await capture('/warn/fixed-sidebar.html')).warnings).toEqual([]);
  });

  it('does not count an image the capture blocked on purpose (block_ads)', async () => {
    const blocked = await capture('/blocking/ad.html', { options: { blockAds: true } });
    expect(blocked.blockedRequests).toBe(0);
    expect(blocked.warnings).toEqual([]);
  });

  it('says no overlay for a fixed element that holds the whole page (an app shell)', async () => {
    const result = await capture('/warn/fixed-shell.html');
    expect(result.warnings).toEqual([]);
  });

  it('still captures a page that broke the functions the probe calls, going without the warnings it gives', async () => {
    for (const waitUntil of ['settled', 'load'] as const) {
      const result = await capture('/warn/hostile.html', { options: { waitUntil } });
      expect(result.width).toBe(1920);
      expect(result.warnings).toEqual([]);
    }
  });

  const loadingNames: Record<keyof typeof LOADING_STATES, string> = {
    'aria-busy': '1 loading state (section.panel[aria-busy])',
    progress: '1 loading state (progress (progress))',
    progressbar: '1 loading state (div.bar (progress))',
    spinner: '1 loading state (div.spinner)',
    skeleton: '3 loading states (div.skeleton, div.skeleton, …)',
    icon: '1 loading state (i.fas.fa-sync-alt)',
    figures: '3 loading states (span.value "-", span.value "-", …)',
    text: '1 loading state ("Loading…")',
    canvas: '1 loading state (canvas 600×300 blank)',
    svg: '1 loading state (svg 600×300 with axes but no data)',
  };

  it.each(Object.keys(LOADING_STATES))('says placeholders for a panel still loading (%s), naming what it shows', async (kind) => {
    // At `load`: a settled capture waits for loading states to go, to its cap (settled.test.ts).
    const result = await capture(`/warn/loading/${kind}.html`, { options: { waitUntil: 'load' } });
    expect(codes(result.warnings)).toEqual(['placeholders']);
    expect(result.warnings[0]!.message).toContain(`The picture shows ${loadingNames[kind]}: the page had not finished drawing.`);
  });

  it('gives none for a dashboard whose panels of each kind have all drawn', async () => {
    const result = await capture('/warn/loaded/all.html', { fullPage: true });
    expect(result.warnings).toEqual([]);
  });

  it('finds a blank canvas by its place in a picture of 3 device pixels per CSS pixel', async () => {
    const blank = await capture('/warn/loading/canvas.html', { preset: PRESETS.mobile });
    expect(blank.warnings).toEqual([{ code: 'placeholders', message: expect.stringMatching(/\(canvas \d+×\d+ blank\)/) }]);
    const drawn = await capture('/warn/loaded/canvas.html', { preset: PRESETS.mobile });
    expect(drawn.warnings).toEqual([]);
  });

  it('says login_page for a sign-in form that is the page\'s content, naming the form', async () => {
    const result = await capture('/warn/login.html');
    expect(codes(result.warnings)).toEqual(['login_page']);
    expect(result.warnings[0]!.message).toMatch(/^The page is a sign-in form \(form#login\): the picture shows the login/);
  });

  it('says no login_page for a long page with a small login box in its header', async () => {
    const result = await capture('/warn/header-login.html');
    expect(result.warnings).toEqual([]);
  });

  it('says truncated when a full page is cut at the height cap, with both heights', async () => {
    const result = await capture('/tall.html?h=5000', { fullPage: true, maxHeight: 2000 });
    expect(result.truncated).toBe(true);
    expect(result.warnings).toEqual([{ code: 'truncated', message: 'The page is 5000 px tall; the picture stops at 2000 px, the most a capture may have.' }]);
  });

  it('says truncated with both widths when an element is cut at its right, not the height it kept', async () => {
    const result = await capture('/opt/wide.html?w=30000&h=40', { format: 'webp', options: { selector: '#wide' } });
    expect([result.width, result.height, result.truncated]).toEqual([16_383, 40, true]);
    // The element is all green, so the picture is also blank.
    expect(result.warnings).toContainEqual({
      code: 'truncated',
      message: 'The element is 30000 px wide; the picture stops at 16383 px from its left, the most a capture may have.',
    });
  });

  it('says http_error when the page answered 4xx or 5xx and was captured', async () => {
    const result = await capture('/warn/not-found.html');
    expect(result.warnings).toEqual([{ code: 'http_error', message: expect.stringContaining('HTTP 404') }]);
  });

  it('counts console errors and uncaught exceptions, quoting the first', async () => {
    const result = await capture('/warn/console-errors.html');
    expect(result.warnings).toEqual([{ code: 'console_errors', message: 'The page reported 3 errors to its console (first: first error 42).' }]);
  });

  it('says network_busy when a request is still in flight at capture', async () => {
    // At `load`: a settled page's wait counts a request held open for seconds as a long poll, not as busy.
    const result = await capture('/warn/busy.html', { options: { waitUntil: 'load' } });
    expect(codes(result.warnings)).toEqual(['network_busy']);
    expect(result.warnings[0]!.message).toMatch(/^1 request was still in flight at capture \(first: .*\/hang\)/);
  });

  it('takes a blank picture of a busy page again once its slow answer came, and says so', async () => {
    // The answer takes 4.5 s: longer than a script's request may be held before it counts as a
    // long poll (3 s), which the blank check waits for all the same.
    for (const waitUntil of ['settled', 'load'] as const) {
      const result = await capture('/warn/paints-late.html', { options: { waitUntil } });
      // The second picture shows the page: green behind the text.
      expect(codes(result.warnings)).toEqual(['network_busy']);
      expect(result.warnings[0]!.message).toMatch(/^The first picture was one colour while 1 request was in flight; it was taken again \d+ ms later/);
      expect(result.html).toContain('Paragraph 40');
    }
  });
});

describe('the one-colour check of a picture', () => {
  /** A width × height PNG of `background`, with one pixel of `dot` at (x, y) when given. */
  async function picture(width: number, height: number, background: string, dot?: { x: number; y: number; colour: string }): Promise<Buffer> {
    const image = sharp({ create: { width, height, channels: 3, background } });
    if (!dot) return image.png().toBuffer();
    const pixel = await sharp({ create: { width: 1, height: 1, channels: 3, background: dot.colour } }).png().toBuffer();
    return image.composite([{ input: pixel, left: dot.x, top: dot.y }]).png().toBuffer();
  }

  it('names the colour of a picture that is all one colour, short or tall', async () => {
    expect(await oneColour(await picture(320, 200, '#123456'))).toBe('#123456');
    expect(await oneColour(await picture(320, 3000, '#ffffff'))).toBe('#ffffff');
  });

  it('finds one pixel of another colour, in the first rows and far below them', async () => {
    expect(await oneColour(await picture(320, 3000, '#ffffff', { x: 5, y: 3, colour: '#fffffe' }))).toBeNull();
    expect(await oneColour(await picture(320, 3000, '#ffffff', { x: 319, y: 2999, colour: '#fffffe' }))).toBeNull();
  });
});

/** The warnings of a capture whose only problems are the cut `truncated` and the wait for a settled page `settle`. */
const warningsOf = ({ truncated = null, settle = null }: { truncated?: Cut | null; settle?: SettleReport | null }) =>
  captureWarnings({ blank: null, probe: NOTHING_PROBED, picture: null, settle, inFlight: [], truncated, httpStatus: 200, console: { count: 0, first: null } });

describe('the truncated warning', () => {
  it('gives the heights when a page is cut at the bottom', async () => {
    const cut: Cut = { of: 'page', asked: { width: 1920, height: 5000.4 }, kept: { width: 1920, height: 2000 } };
    expect(await warningsOf({ truncated: cut })).toEqual([{ code: 'truncated', message: 'The page is 5000 px tall; the picture stops at 2000 px, the most a capture may have.' }]);
  });

  it('gives the widths when an element is cut at its right', async () => {
    const cut: Cut = { of: 'element', asked: { width: 30_000, height: 40 }, kept: { width: 16_383, height: 40 } };
    expect(await warningsOf({ truncated: cut })).toEqual([
      { code: 'truncated', message: 'The element is 30000 px wide; the picture stops at 16383 px from its left, the most a capture may have.' },
    ]);
  });

  it('gives both sides when a clip is cut in width and height', async () => {
    const cut: Cut = { of: 'clip', asked: { width: 16_384, height: 16_384 }, kept: { width: 12_247, height: 12_247 } };
    expect(await warningsOf({ truncated: cut })).toEqual([
      { code: 'truncated', message: 'The clip is 16384 × 16384 px; the picture keeps its top left 12247 × 12247 px, the most a capture may have.' },
    ]);
  });
});

describe('the not_settled warning', () => {
  const atCap: SettleReport = { settled: false, waitedMs: 8_000, capMs: 8_000, holding: ['picture'], changing: null, ignored: [], busy: [] };

  it('says where the picture was still changing at the cap, for how long, and what to try', async () => {
    const settle: SettleReport = { ...atCap, changing: { x: 40, y: 200.4, width: 320, height: 180, forMs: 7_600 } };
    expect(await warningsOf({ settle })).toEqual([
      {
        code: 'not_settled',
        message:
          'The picture was still changing at the settle cap (8000 ms): a 320 × 180 px region at (40, 200) changed for the last 7.6 s. ' +
          'Raise settle_timeout, or wait_for_selector for the element that finishes last.',
      },
    ]);
  });

  it('says what else held the page: its requests in flight, its fonts', async () => {
    const settle: SettleReport = { ...atCap, holding: ['network', 'fonts'], busy: ['http://127.0.0.1/api/series', 'http://127.0.0.1/api/gauges'] };
    expect((await warningsOf({ settle }))[0]!.message).toBe(
      'The network was still busy at the settle cap (8000 ms): 2 requests in flight (first: http://127.0.0.1/api/series). Web fonts were still loading. ' +
        'Raise settle_timeout, or wait_for_selector for the element that finishes last.',
    );
  });

  it('says nothing of a page that settled, or of a capture that did not wait for it', async () => {
    expect(await warningsOf({ settle: { ...atCap, settled: true, waitedMs: 900, holding: [] } })).toEqual([]);
    expect(await warningsOf({ settle: null })).toEqual([]);
  });
});

describe('the addresses a warning names', () => {
  const long = `http://127.0.0.1:9/${'a'.repeat(5_000)}`;
  const shown = `${long.slice(0, 200)}…`;

  it('are cut to 200 characters: a page makes its addresses as long as it likes', async () => {
    const probe = { ...NOTHING_PROBED, images: { failed: 1, loading: 0, first: `data:image/png;base64,${'A'.repeat(5_000)}`, shown: 1, missingShare: 1 } };
    const settle: SettleReport = { settled: false, waitedMs: 1_000, capMs: 1_000, holding: ['network'], changing: null, ignored: [], busy: [long] };
    const warnings = await captureWarnings({ blank: null, probe, picture: null, settle, inFlight: [long], truncated: null, httpStatus: 200, console: { count: 0, first: null } });
    expect(warnings.map((w) => w.code)).toEqual(['images_not_loaded', 'network_busy', 'not_settled']);
    for (const warning of warnings) expect(warning.message.length).toBeLessThan(500);
    expect(warnings.find((w) => w.code === 'network_busy')!.message).toContain(`(first: ${shown})`);
  });
});
