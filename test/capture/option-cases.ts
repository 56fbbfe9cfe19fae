// The capture options every CaptureEngine must apply, one case per option, as plain data like
// conformance-cases.ts: test/capture/capture-options.test.ts runs them against ChromiumEngine,
// test/electron/conformance-runner.ts against ElectronEngine. Each case checks the picture
// (pixels, sizes) or what the page and the server saw, not only that the capture completed.
import assert from 'node:assert/strict';

import sharp from 'sharp';

import type { CaptureOptions } from '../../server/capture/capture-options.js';
import type { CaptureRequest, CaptureResult } from '../../server/capture/engine.js';
import { PRESETS } from '../../server/capture/presets.js';
import { BASIC_CREDENTIALS, optionHeadersSeen } from '../fixtures/option-pages.js';
import { captureRequest, type ConformanceCase, rejection, seen } from './conformance-cases.js';

type Rgb = [number, number, number];
const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const WHITE: Rgb = [255, 255, 255];
const BLACK_TEXT_OR_WHITE = WHITE;
/** Colours of the blocking fixture pages (test/fixtures/blocking-pages.ts). */
const OWN_GREEN: Rgb = [0, 192, 0];
const BAND_BLUE: Rgb = [0, 80, 255];
const MAGENTA: Rgb = [255, 0, 255];

/** The colour at (x, y) in image pixels. */
async function pixel(result: CaptureResult, x: number, y: number): Promise<Rgb> {
  const { data, info } = await sharp(result.image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}

const isClose = (actual: Rgb, expected: Rgb) => actual.every((c, i) => Math.abs(c - expected[i]!) <= 8);

function assertColour(actual: Rgb, expected: Rgb, what: string): void {
  assert.ok(isClose(actual, expected), `${what}: expected rgb(${expected.join(',')}), got rgb(${actual.join(',')})`);
}

/** Every pixel of the image is `expected` (within a small tolerance). */
async function assertAll(result: CaptureResult, expected: Rgb, what: string): Promise<void> {
  const { data, info } = await sharp(result.image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  for (let i = 0; i < data.length; i += info.channels) {
    const got: Rgb = [data[i]!, data[i + 1]!, data[i + 2]!];
    if (!got.every((c, k) => Math.abs(c - expected[k]!) <= 8)) {
      const p = i / info.channels;
      assert.fail(`${what}: pixel (${p % info.width}, ${Math.floor(p / info.width)}) is rgb(${got.join(',')})`);
    }
  }
}

let runs = 0;
/** Tells one capture's requests to the fixture server from another's. */
const runId = () => `r${Date.now().toString(36)}-${++runs}`;

const withOptions = (fixtureUrl: string, path: string, options: CaptureOptions, more: Partial<CaptureRequest> = {}) =>
  captureRequest(fixtureUrl, path, { ...more, options });

/** Tells the /opt/turns-green.html page of `run` to turn green, whether it is waiting yet or not. */
async function turnGreen(fixtureUrl: string, run: string): Promise<void> {
  const response = await fetch(`${fixtureUrl}/opt/turn-green?run=${run}`, { signal: AbortSignal.timeout(5_000) });
  assert.equal(response.status, 204, 'the page was told');
}

/** The JSON a /opt/echo.html page shows in `<pre id="…">`. */
function echoed(result: CaptureResult, id: 'server' | 'client'): Record<string, unknown> {
  const match = new RegExp(`<pre id="${id}">(.*?)</pre>`).exec(result.html ?? '');
  assert.ok(match, `the page shows #${id}`);
  return JSON.parse(match[1]!.replace(/&lt;/g, '<').replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as Record<string, unknown>;
}

export const optionCases: ConformanceCase[] = [
  {
    name: 'wait_until domcontentloaded captures before load, load (the default) after it',
    async run(engine, fixtureUrl) {
      const early = await engine.capture(withOptions(fixtureUrl, '/opt/stalled-load.html', { waitUntil: 'domcontentloaded' }));
      assertColour(await pixel(early, 1000, 900), BLACK_TEXT_OR_WHITE, 'before load');
      const late = await engine.capture(withOptions(fixtureUrl, '/opt/stalled-load.html', {}));
      assertColour(await pixel(late, 1000, 900), GREEN, 'after load');
    },
  },
  {
    name: 'wait_until networkidle waits for requests a page starts after load',
    async run(engine, fixtureUrl) {
      const idle = await engine.capture(withOptions(fixtureUrl, '/opt/idle.html', { waitUntil: 'networkidle' }));
      assertColour(await pixel(idle, 1000, 900), BLUE, 'after the network went idle');
    },
  },
  {
    name: 'delay waits before the capture',
    async run(engine, fixtureUrl) {
      // The page turns green only when told (turnGreen), never by itself.
      const without = await engine.capture(withOptions(fixtureUrl, `/opt/turns-green.html?run=${runId()}`, {}));
      assertColour(await pixel(without, 1000, 900), RED, 'never told to turn green');
      // Told 250 ms after progress 40, which comes once the page has loaded and right before the
      // options and the delay: a picture taken without the delay would come before that and be
      // red; with it, the page has 1750 ms to turn green before the picture.
      const run = runId();
      let afterLoad = 0;
      let told: Promise<void> | undefined;
      const onProgress = (progress: number) => {
        if (progress !== 40) return;
        afterLoad = Date.now();
        told = new Promise((resolve) => setTimeout(resolve, 250)).then(() => turnGreen(fixtureUrl, run));
      };
      const delayed = await engine.capture(withOptions(fixtureUrl, `/opt/turns-green.html?run=${run}`, { delayMs: 2000 }, { onProgress }));
      assert.ok(afterLoad > 0 && Date.now() - afterLoad >= 2000, 'it took the delay at least, after load');
      await told;
      assertColour(await pixel(delayed, 1000, 900), GREEN, 'with delay 2000');
    },
  },
  {
    name: 'wait_for_selector waits for a visible element, and fails naming one that never shows',
    async run(engine, fixtureUrl) {
      const shown = await engine.capture(withOptions(fixtureUrl, '/opt/late.html', { waitForSelector: '#late' }));
      assertColour(await pixel(shown, 200, 150), GREEN, 'the late element');
      const err = await rejection(
        engine.capture(withOptions(fixtureUrl, '/opt/late.html', { waitForSelector: '#never' }, { captureTimeoutMs: 3_000 })),
      );
      assert.equal(err.message, 'Timed out waiting for selector #never');
    },
  },
  {
    name: 'selector captures only the first matching element, and fails naming one that matches nothing',
    async run(engine, fixtureUrl) {
      const element = await engine.capture(withOptions(fixtureUrl, '/opt/colors.html', { selector: '#green' }));
      assert.deepEqual([element.width, element.height], [300, 200]);
      await assertAll(element, GREEN, 'the element');
      const err = await rejection(engine.capture(withOptions(fixtureUrl, '/opt/colors.html', { selector: '#nope' })));
      assert.equal(err.message, 'No element matches #nope');
    },
  },
  {
    name: 'clip captures a rectangle of the page, below the fold included',
    async run(engine, fixtureUrl) {
      const clip = await engine.capture(withOptions(fixtureUrl, '/opt/colors.html', { clip: { x: 350, y: 1550, width: 100, height: 50 } }));
      assert.deepEqual([clip.width, clip.height], [100, 50]);
      await assertAll(clip, GREEN, 'the clip');
    },
  },
  {
    name: "scale overrides the preset's device scale factor",
    async run(engine, fixtureUrl) {
      const preset = { ...PRESETS.desktop, deviceScaleFactor: 2 };
      const result = await engine.capture(captureRequest(fixtureUrl, '/opt/colors.html', { preset }));
      assert.deepEqual([result.width, result.height], [3840, 2160]);
      assertColour(await pixel(result, 390, 190), RED, 'the red block at 2×');
      assertColour(await pixel(result, 410, 210), WHITE, 'past the red block at 2×');
    },
  },
  {
    name: 'hide_selectors hides matching elements',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/opt/colors.html', { hideSelectors: ['#red', '.absent'] }));
      assertColour(await pixel(result, 100, 50), WHITE, 'where the red block was');
    },
  },
  {
    name: 'maskSelectors paints an opaque grey box over matching elements, also below the first screen',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(
        withOptions(fixtureUrl, '/opt/colors.html', { maskSelectors: ['#red', '#green', '.absent'] }, { fullPage: true }),
      );
      const GREY: Rgb = [128, 128, 128];
      assertColour(await pixel(result, 100, 50), GREY, 'where the red block is');
      assertColour(await pixel(result, 250, 50), WHITE, 'beside the masked red block');
      assertColour(await pixel(result, 450, 1600), GREY, 'where the green block is, below the first screen');
    },
  },
  {
    name: 'styles adds CSS to the page',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/opt/colors.html', { styles: '#red { background: rgb(0, 0, 255) !important }' }));
      assertColour(await pixel(result, 100, 50), BLUE, 'the restyled block');
    },
  },
  {
    name: 'scripts runs in the page after load and is awaited; a failing script fails the job saying so',
    async run(engine, fixtureUrl) {
      const scripts = "new Promise((r) => setTimeout(() => { document.body.style.background = 'rgb(0, 0, 255)'; r(); }, 300))";
      const result = await engine.capture(withOptions(fixtureUrl, '/small.html', { scripts }));
      assertColour(await pixel(result, 1000, 900), BLUE, 'what the script painted');
      const err = await rejection(engine.capture(withOptions(fixtureUrl, '/small.html', { scripts: "throw new Error('no way')" })));
      assert.match(err.message, /^The script failed: .*no way/);
    },
  },
  {
    name: 'click_selector clicks the first matching element with a real click',
    async run(engine, fixtureUrl) {
      const before = await engine.capture(withOptions(fixtureUrl, '/opt/click.html', {}));
      assertColour(await pixel(before, 250, 200), WHITE, 'no panel without the click');
      const clicked = await engine.capture(withOptions(fixtureUrl, '/opt/click.html', { clickSelector: '#open' }));
      assertColour(await pixel(clicked, 250, 200), GREEN, 'the panel the click opened');
      const err = await rejection(engine.capture(withOptions(fixtureUrl, '/opt/click.html', { clickSelector: '#nope' })));
      assert.equal(err.message, 'No element matches #nope');
    },
  },
  {
    name: "block_ads leaves an ad server's image out of the picture, showing the page under it; without it the ad shows",
    requires: 'hostsMapped',
    async run(engine, fixtureUrl) {
      const blocked = await engine.capture(withOptions(fixtureUrl, '/blocking/ad.html', { blockAds: true }));
      assertColour(await pixel(blocked, 150, 125), WHITE, 'where the ad was');
      assertColour(await pixel(blocked, 550, 125), OWN_GREEN, "the page's own image");
      const shown = await engine.capture(withOptions(fixtureUrl, '/blocking/ad.html', {}));
      assertColour(await pixel(shown, 150, 125), RED, 'the ad without the option');
    },
  },
  {
    name: "block_ads never blocks the page's own site, even when it is an ad server's, and lets trackers through",
    requires: 'hostsMapped',
    async run(engine, fixtureUrl) {
      const run = runId();
      const adSite = `http://securepubads.g.doubleclick.net:${new URL(fixtureUrl).port}`;
      const result = await engine.capture(withOptions(adSite, `/blocking/own-site.html?run=${run}`, { blockAds: true }));
      assert.equal(result.httpStatus, 200);
      assert.equal((await seen(fixtureUrl, `/blocking/own.png?run=${run}`)).length, 1, "an image of another host of the page's site");
      assert.equal((await seen(fixtureUrl, `/blocking/other-ad.png?run=${run}`)).length, 0, "another site's ad server");
      assertColour(await pixel(result, 150, 125), OWN_GREEN, "the own site's image");
      assertColour(await pixel(result, 550, 125), WHITE, "where the other site's ad was");
      const tracked = runId();
      await engine.capture(withOptions(fixtureUrl, `/blocking/tracker.html?run=${tracked}`, { blockAds: true }));
      assert.equal((await seen(fixtureUrl, `/blocking/beacon.gif?run=${tracked}`)).length, 1, 'the tracker with only ads blocked');
    },
  },
  {
    name: "block_trackers never sends a tracker's request, also when headers make it use Chromium's own blocking; without it the request is sent",
    requires: 'hostsMapped',
    async run(engine, fixtureUrl) {
      const beacons = async (options: CaptureOptions) => {
        const run = runId();
        const result = await engine.capture(withOptions(fixtureUrl, `/blocking/tracker.html?run=${run}`, options));
        assert.equal(result.httpStatus, 200);
        return (await seen(fixtureUrl, `/blocking/beacon.gif?run=${run}`)).length;
      };
      assert.equal(await beacons({ blockTrackers: true }), 0, 'blocked');
      assert.equal(await beacons({ blockTrackers: true, headers: { 'X-Test': '1' } }), 0, 'blocked along with headers');
      assert.equal(await beacons({}), 1, 'sent without the option');
    },
  },
  {
    name: 'block_cookie_banners refuses a OneTrust dialog through its reject button, so the page under it shows unlocked; without it the dialog shows',
    async run(engine, fixtureUrl) {
      const before = (await seen(fixtureUrl, '/blocking/choice')).length;
      const refused = await engine.capture(withOptions(fixtureUrl, '/blocking/onetrust.html', { blockCookieBanners: true }));
      assertColour(await pixel(refused, 960, 300), BAND_BLUE, 'the band, not darkened');
      assertColour(await pixel(refused, 960, 1000), WHITE, 'where the banner was');
      const choices = (await seen(fixtureUrl, '/blocking/choice')).slice(before).map((r) => r.path);
      assert.deepEqual(choices, ['/blocking/choice?c=reject']);
      const shown = await engine.capture(withOptions(fixtureUrl, '/blocking/onetrust.html', {}));
      assertColour(await pixel(shown, 960, 1000), MAGENTA, 'the banner without the option');
      assert.ok(!isClose(await pixel(shown, 960, 300), BAND_BLUE), 'the band darkened by the dialog without the option');
    },
  },
  {
    name: 'block_cookie_banners hides a consent dialog nothing answers, and undoes its scroll lock',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/blocking/static-cmp.html', { blockCookieBanners: true }));
      assertColour(await pixel(result, 960, 300), BAND_BLUE, 'the band, not darkened');
      assertColour(await pixel(result, 960, 1000), WHITE, 'where the dialog was');
      assert.match(result.html ?? '', /<body style="overflow: visible !important;/);
    },
  },
  {
    name: 'dark_mode emulates prefers-color-scheme: dark',
    async run(engine, fixtureUrl) {
      assertColour(await pixel(await engine.capture(withOptions(fixtureUrl, '/opt/dark.html', {})), 1000, 900), WHITE, 'light');
      assertColour(await pixel(await engine.capture(withOptions(fixtureUrl, '/opt/dark.html', { darkMode: true })), 1000, 900), GREEN, 'dark');
    },
  },
  {
    name: 'reduced_motion emulates prefers-reduced-motion: reduce and freezes animations and transitions at their end',
    async run(engine, fixtureUrl) {
      const moving = await engine.capture(withOptions(fixtureUrl, '/opt/motion.html', {}));
      assert.ok((await pixel(moving, 200, 150))[0] > 200, 'the animation has barely started without the option');
      assert.ok((await pixel(moving, 700, 150))[0] > 200, 'the transition has barely started without the option');
      assertColour(await pixel(moving, 1200, 150), WHITE, 'no reduced motion without the option');
      const frozen = await engine.capture(withOptions(fixtureUrl, '/opt/motion.html', { reducedMotion: true }));
      assertColour(await pixel(frozen, 200, 150), GREEN, 'the animation at its end');
      assertColour(await pixel(frozen, 700, 150), GREEN, 'the transition at its end');
      assertColour(await pixel(frozen, 1200, 150), BLUE, 'the page’s prefers-reduced-motion rule');
    },
  },
  {
    name: 'media_type print applies print styles',
    async run(engine, fixtureUrl) {
      const print = await engine.capture(withOptions(fixtureUrl, '/opt/print.html', { mediaType: 'print' }));
      assertColour(await pixel(print, 1000, 900), GREEN, 'print media');
      const screen = await engine.capture(withOptions(fixtureUrl, '/opt/print.html', { mediaType: 'screen' }));
      assertColour(await pixel(screen, 1000, 900), WHITE, 'screen media');
    },
  },
  {
    name: "headers and http_auth go to the page's own origin only",
    async run(engine, fixtureUrl) {
      const result = await engine.capture(
        withOptions(fixtureUrl, '/opt/echo.html', { headers: { 'X-Secret': 's3cret' }, httpAuth: BASIC_CREDENTIALS }),
      );
      const server = echoed(result, 'server');
      assert.equal(server.secret, 's3cret');
      assert.match(String(server.authorization), /^Basic /);
      assert.equal(optionHeadersSeen.get('/opt/record-same.png')?.['x-secret'], 's3cret', 'a same-origin image gets the header');
      const other = optionHeadersSeen.get('/opt/record.png');
      assert.ok(other, 'the other origin was asked for its image');
      assert.equal(other['x-secret'], undefined, 'another origin gets no header');
      assert.equal(other.authorization, undefined, 'another origin gets no credentials');
    },
  },
  {
    name: 'http_auth opens a page behind HTTP Basic authentication',
    async run(engine, fixtureUrl) {
      const locked = await rejection(engine.capture(withOptions(fixtureUrl, '/opt/basic.html', {})));
      assert.match(locked.message, /asks for HTTP authentication \(give it with http_auth\)$/);
      const open = await engine.capture(withOptions(fixtureUrl, '/opt/basic.html', { httpAuth: BASIC_CREDENTIALS }));
      assert.equal(open.httpStatus, 200);
      assertColour(await pixel(open, 1000, 900), GREEN, 'with credentials');
    },
  },
  {
    name: 'cookies are set before navigation',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(
        withOptions(fixtureUrl, '/opt/echo.html', { cookies: [{ name: 'session', value: 'abc123' }, { name: 'hidden', value: 'h', httpOnly: true }] }),
      );
      assert.equal(echoed(result, 'server').cookie, 'session=abc123; hidden=h');
      assert.equal(echoed(result, 'client').cookie, 'session=abc123', 'an http_only cookie is not visible to scripts');
    },
  },
  {
    name: "user_agent replaces the preset's user agent",
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/opt/echo.html', { userAgent: 'ApplianceTest/1.0' }));
      assert.equal(echoed(result, 'server').user_agent, 'ApplianceTest/1.0');
      assert.equal(result.userAgent, 'ApplianceTest/1.0');
    },
  },
  {
    name: 'timezone and locale set the time zone, navigator.language and Accept-Language',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/opt/echo.html', { timezone: 'Asia/Tokyo', locale: 'fr-FR' }));
      const client = echoed(result, 'client');
      assert.equal(client.zone, 'Asia/Tokyo');
      assert.equal(client.offset, -540);
      assert.equal(client.language, 'fr-FR');
      assert.match(String(echoed(result, 'server').accept_language), /^fr-FR/);
    },
  },
  {
    name: 'fail_on_http_error fails a page answering 4xx or 5xx; without it the status is reported',
    async run(engine, fixtureUrl) {
      const err = await rejection(engine.capture(withOptions(fixtureUrl, '/status/404', { failOnHttpError: true })));
      assert.equal(err.message, 'The page answered 404');
      const shown = await engine.capture(withOptions(fixtureUrl, '/status/503', {}));
      assert.equal(shown.httpStatus, 503);
    },
  },
  {
    name: 'reports http_status, final_url after redirects, and page_title',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/redirect?to=/small.html', {}));
      assert.equal(result.httpStatus, 200);
      assert.equal(result.finalUrl, `${fixtureUrl}/small.html`);
      assert.equal(result.pageTitle, 'Small page');
    },
  },
  {
    name: 'format pdf prints the page to an A4 PDF',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(captureRequest(fixtureUrl, '/tall.html?h=4000', { format: 'pdf' }));
      assert.equal(result.format, 'pdf');
      assert.equal(result.image.subarray(0, 5).toString('latin1'), '%PDF-');
      const text = result.image.toString('latin1');
      const pages = text.match(/\/Type\s*\/Page[^s]/g) ?? [];
      assert.ok(pages.length >= 3, `a 4000 px page prints on several pages (${pages.length})`);
      assert.match(text, /\/MediaBox\s*\[\s*0 0 595\.\d+ 841\.\d+\s*\]/, 'A4 pages');
      assert.equal(result.pageTitle, 'Tall page');
    },
  },
  {
    name: 'omit_background leaves alpha 0 where the page paints nothing, 255 where it paints',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/opt/colors.html', { omitBackground: true }));
      const { data, info } = await sharp(result.image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
      assert.equal(alpha(1000, 500), 0, 'no background');
      assert.equal(alpha(50, 50), 255, 'the red block');
      assertColour(await pixel(result, 50, 50), RED, 'the red block');
    },
  },
  {
    name: 'image_width resizes the picture, the height following the aspect ratio',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(withOptions(fixtureUrl, '/opt/colors.html', { imageWidth: 480 }));
      assert.deepEqual([result.width, result.height], [480, 270]);
      const { width, height } = await sharp(result.image).metadata();
      assert.deepEqual([width, height], [480, 270]);
      assertColour(await pixel(result, 20, 10), RED, 'the red block, a quarter as large');
    },
  },
  {
    name: 'html renders the document at its base_url, relative addresses resolving there',
    async run(engine, fixtureUrl) {
      const base = `${fixtureUrl}/opt/`;
      const document = '<!doctype html><title>Given</title><body style="margin:0;background:#00f"><iframe src="colors.html" style="border:0;width:400px;height:300px"></iframe>';
      const result = await engine.capture(withOptions(fixtureUrl, '/never-fetched', { html: { document, baseUrl: base } }));
      assert.equal(result.finalUrl, base);
      assert.equal(result.pageTitle, 'Given');
      assertColour(await pixel(result, 50, 50), RED, 'colors.html in the frame');
      assertColour(await pixel(result, 1000, 500), BLUE, "the document's own background");
    },
  },
];
