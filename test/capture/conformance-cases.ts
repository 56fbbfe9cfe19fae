// The behaviour every CaptureEngine must show, as plain data so any runner can use it:
// test/capture/chromium-engine.test.ts runs it with vitest against ChromiumEngine, and
// test/electron/conformance-runner.ts inside Electron against ElectronEngine.
// node:assert only — no test framework here.
import assert from 'node:assert/strict';

import sharp from 'sharp';

import type { CaptureEngine, CaptureRequest, CaptureResult } from '../../server/capture/engine.js';
import { type Preset, PRESETS, userAgentFor } from '../../server/capture/presets.js';
import { closedPort } from '../helpers/ports.js';

/** Engine-specific powers a few cases need; a runner without one skips those cases. */
export interface ConformanceHooks {
  /** Kills the engine's browser process (as a crash would) while a capture runs. */
  crashBrowser?: (engine: CaptureEngine) => Promise<void>;
  /**
   * True when the engine's browser resolves the ad and tracker hosts of the blocking fixture
   * pages (BLOCKING_HOSTS in test/fixtures/blocking-pages.ts) to 127.0.0.1, e.g. with Chromium's
   * `--host-resolver-rules=` HOST_RESOLVER_RULES.
   */
  hostsMapped?: boolean;
}

export interface ConformanceCase {
  name: string;
  /** The hook the case needs; without it the runner skips the case (it passes when run without). */
  requires?: keyof ConformanceHooks;
  run(engine: CaptureEngine, fixtureUrl: string, hooks?: ConformanceHooks): Promise<void>;
}

/** A request with the service's defaults, shortened time-outs aside. */
export function captureRequest(fixtureUrl: string, path: string, overrides: Partial<CaptureRequest> = {}): CaptureRequest {
  return {
    url: fixtureUrl + path,
    preset: PRESETS.desktop,
    fullPage: false,
    googlebot: false,
    format: 'png',
    maxHeight: 16_384,
    navigationTimeoutMs: 15_000,
    captureTimeoutMs: 15_000,
    maxSourceBytes: 5_000_000,
    ...overrides,
  };
}

/** Width and height read from the encoded bytes, to check the engine reports what it made. */
async function imageFacts(result: CaptureResult): Promise<{ format: string; width: number; height: number }> {
  const meta = await sharp(result.image).metadata();
  return { format: meta.format ?? 'unknown', width: meta.width ?? 0, height: meta.height ?? 0 };
}

async function assertImage(result: CaptureResult, format: string, width: number, height: number): Promise<void> {
  assert.equal(result.format, format);
  assert.deepEqual({ width: result.width, height: result.height }, { width, height }, 'reported size');
  assert.deepEqual(await imageFacts(result), { format, width, height }, 'encoded image');
}

/** Requests the fixture server saw whose path starts with `prefix` (via its /seen page). */
export async function seen(fixtureUrl: string, prefix: string): Promise<Array<{ path: string; userAgent: string }>> {
  const response = await fetch(`${fixtureUrl}/seen?prefix=${encodeURIComponent(prefix)}`, {
    signal: AbortSignal.timeout(5_000),
  });
  return (await response.json()) as Array<{ path: string; userAgent: string }>;
}

const unique = () => Math.random().toString(36).slice(2, 10);

/** The error `work` fails with; an assertion error when it succeeds. */
export async function rejection(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (err) {
    return err as Error;
  }
  throw new assert.AssertionError({ message: 'expected the capture to fail, but it succeeded' });
}

/** Resolves once the fixture server at `fixtureUrl` has received a request for `path`. */
async function untilRequested(fixtureUrl: string, path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = (await (await fetch(`${fixtureUrl}/seen?prefix=${encodeURIComponent(path)}`)).json()) as unknown[];
    if (seen.length > 0) return;
    if (Date.now() > deadline) throw new Error(`the fixture server never saw ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function assertCapturesAfterwards(engine: CaptureEngine, fixtureUrl: string): Promise<void> {
  const next = await engine.capture(captureRequest(fixtureUrl, '/small.html'));
  await assertImage(next, 'png', 1920, 1080);
  assert.ok(engine.isReady(), 'the engine is ready again');
}

function presetCase(preset: Preset, width: number, height: number): ConformanceCase {
  return {
    name: `captures the ${preset.name} preset at ${width}×${height} device pixels`,
    async run(engine, fixtureUrl) {
      const progress: number[] = [];
      const result = await engine.capture(
        captureRequest(fixtureUrl, '/small.html', { preset, onProgress: (p) => progress.push(p) }),
      );
      await assertImage(result, 'png', width, height);
      assert.equal(result.truncated, false);
      assert.deepEqual(progress, [40, 70], 'progress after load and after capture');
    },
  };
}

async function userAgentCase(
  engine: CaptureEngine,
  fixtureUrl: string,
  preset: Preset,
  googlebot: boolean,
  mustContain: string[],
): Promise<void> {
  const path = `/ua?case=${unique()}`;
  const result = await engine.capture(captureRequest(fixtureUrl, path, { preset, googlebot }));
  const version = engine.chromiumVersion();
  assert.match(version, /^\d+\.\d+\.\d+\.\d+$/, 'a full Chromium version');
  const expected = userAgentFor(preset, googlebot, version);
  assert.equal(result.userAgent, expected);
  for (const part of [`Chrome/${version}`, ...mustContain]) assert.ok(expected.includes(part), `UA has ${part}`);
  const requests = await seen(fixtureUrl, path);
  assert.equal(requests.length, 1, 'the server saw the page once');
  assert.equal(requests[0]!.userAgent, expected, 'the server saw the user agent');
  const escaped = expected.replace(/</g, '&lt;');
  assert.ok(result.html?.includes(`<pre id="ua">${escaped}</pre>`), 'the page shows the user agent');
}

export const conformanceCases: ConformanceCase[] = [
  presetCase(PRESETS.desktop, 1920, 1080),
  presetCase(PRESETS.tablet, 2048, 1536),
  presetCase(PRESETS.mobile, 1170, 2532),

  {
    name: 'uses the viewport override instead of the preset size, keeping its pixel ratio',
    async run(engine, fixtureUrl) {
      const desktop = await engine.capture(captureRequest(fixtureUrl, '/small.html', { viewport: { width: 1280, height: 720 } }));
      await assertImage(desktop, 'png', 1280, 720);
      const mobile = await engine.capture(
        captureRequest(fixtureUrl, '/small.html', { preset: PRESETS.mobile, viewport: { width: 400, height: 800 } }),
      );
      await assertImage(mobile, 'png', 1200, 2400);
    },
  },

  {
    name: 'captures the full height of a 5000 px page, times the pixel ratio',
    async run(engine, fixtureUrl) {
      const desktop = await engine.capture(captureRequest(fixtureUrl, '/tall.html?h=5000', { fullPage: true }));
      await assertImage(desktop, 'png', 1920, 5000);
      assert.equal(desktop.truncated, false);
      const mobile = await engine.capture(
        captureRequest(fixtureUrl, '/tall.html?h=5000', { fullPage: true, preset: PRESETS.mobile }),
      );
      await assertImage(mobile, 'png', 1170, 15000);
      assert.equal(mobile.truncated, false);
    },
  },

  {
    name: 'cuts a full page at maxHeight and says it was truncated',
    async run(engine, fixtureUrl) {
      const desktop = await engine.capture(captureRequest(fixtureUrl, '/tall.html?h=5000', { fullPage: true, maxHeight: 2000 }));
      await assertImage(desktop, 'png', 1920, 2000);
      assert.equal(desktop.truncated, true);
      const tablet = await engine.capture(
        captureRequest(fixtureUrl, '/tall.html?h=5000', { fullPage: true, maxHeight: 2000, preset: PRESETS.tablet }),
      );
      await assertImage(tablet, 'png', 2048, 4000);
      assert.equal(tablet.truncated, true);
    },
  },

  {
    name: 'scrolls a full page first so lazy content loads and is captured',
    async run(engine, fixtureUrl) {
      const before = (await seen(fixtureUrl, '/lazy-loaded')).length;
      const result = await engine.capture(captureRequest(fixtureUrl, '/lazy.html', { fullPage: true }));
      assert.equal((await seen(fixtureUrl, '/lazy-loaded')).length, before + 1, 'the lazy request was made');
      // 3000 px of page plus the 1000 px block that appears at the bottom.
      await assertImage(result, 'png', 1920, 4000);
      assert.ok(result.html?.includes('lazy content loaded'));
    },
  },

  {
    name: 'scrolls a full page whose script observes intersections, and captures what loads',
    async run(engine, fixtureUrl) {
      const before = (await seen(fixtureUrl, '/lazy-loaded?kind=io')).length;
      const result = await engine.capture(captureRequest(fixtureUrl, '/lazy-kind.html?kind=io', { fullPage: true }));
      assert.equal((await seen(fixtureUrl, '/lazy-loaded?kind=io')).length, before + 1, 'the lazy request was made');
      assert.ok(result.html?.includes('lazy content loaded'));
    },
  },

  {
    name: 'waits for requests a page starts after load, one after another, before capturing',
    async run(engine, fixtureUrl) {
      const topBand = async (result: CaptureResult) => {
        const { data } = await sharp(result.image).extract({ left: 1000, top: 80, width: 1, height: 1 }).raw().toBuffer({ resolveWithObject: true });
        return [...data.subarray(0, 3)];
      };
      for (const via of ['timer', 'frame']) {
        const result = await engine.capture(captureRequest(fixtureUrl, `/late.html?via=${via}`));
        assert.ok(result.html?.includes('late content arrived'), `the page once its late requests are done (${via})`);
        assert.deepEqual(await topBand(result), [0, 255, 0], `the picture once its late requests are done (${via})`);
      }
      // Requests that start 100 ms after load, while a 10,000 px page is being captured: the
      // picture is taken again once they are done.
      const tall = await engine.capture(captureRequest(fixtureUrl, '/late.html?via=timer&after=100&h=10000', { fullPage: true }));
      assert.ok(tall.html?.includes('late content arrived'), 'the tall page once its late requests are done');
      assert.deepEqual(await topBand(tall), [0, 255, 0], 'the tall picture once its late requests are done');
    },
  },

  {
    name: 'captures a page whose network is never idle, within the bounded wait',
    async run(engine, fixtureUrl) {
      // Waiting for quiet and taking the picture again stops 1.5 s after the first picture; an
      // endless series would run into the capture time-out and fail the job.
      for (const fullPage of [false, true]) {
        const result = await engine.capture(captureRequest(fixtureUrl, '/poll.html', { fullPage, captureTimeoutMs: 8_000 }));
        await assertImage(result, 'png', 1920, 1080);
        assert.match(result.html ?? '', /<p id="polls">\d+<\/p>/);
      }
    },
  },

  {
    name: 'sends the mobile user agent with the real Chromium version',
    run: (engine, fixtureUrl) => userAgentCase(engine, fixtureUrl, PRESETS.mobile, false, ['Android', 'Mobile Safari']),
  },
  {
    name: 'sends the Googlebot Desktop user agent for the desktop preset',
    run: (engine, fixtureUrl) => userAgentCase(engine, fixtureUrl, PRESETS.desktop, true, ['Googlebot/2.1']),
  },
  {
    name: 'sends the Googlebot Smartphone user agent for the mobile and tablet presets',
    async run(engine, fixtureUrl) {
      await userAgentCase(engine, fixtureUrl, PRESETS.mobile, true, ['Googlebot/2.1', 'Nexus 5X', 'Mobile Safari']);
      await userAgentCase(engine, fixtureUrl, PRESETS.tablet, true, ['Googlebot/2.1', 'Nexus 5X']);
    },
  },

  {
    name: 'returns the page HTML, or null when it is larger than maxSourceBytes',
    async run(engine, fixtureUrl) {
      const small = await engine.capture(captureRequest(fixtureUrl, '/small.html'));
      assert.ok(small.html?.includes('<h1 id="title">Hello from the fixture</h1>'), 'the serialised page');
      const big = await engine.capture(captureRequest(fixtureUrl, '/big-source.html?kb=200', { maxSourceBytes: 100_000 }));
      assert.equal(big.html, null);
      const fits = await engine.capture(captureRequest(fixtureUrl, '/big-source.html?kb=50', { maxSourceBytes: 100_000 }));
      assert.ok(fits.html && fits.html.length > 50 * 1024);
    },
  },

  {
    name: 'encodes jpeg and webp at the requested quality',
    async run(engine, fixtureUrl) {
      const jpeg = await engine.capture(captureRequest(fixtureUrl, '/tall.html?h=1080', { format: 'jpeg', quality: 60 }));
      await assertImage(jpeg, 'jpeg', 1920, 1080);
      const jpegBest = await engine.capture(captureRequest(fixtureUrl, '/tall.html?h=1080', { format: 'jpeg', quality: 95 }));
      assert.ok(jpegBest.image.length > jpeg.image.length, 'higher quality, larger file');
      const webp = await engine.capture(captureRequest(fixtureUrl, '/tall.html?h=1080', { format: 'webp', preset: PRESETS.tablet }));
      await assertImage(webp, 'webp', 2048, 1536);
    },
  },

  {
    name: 'captures an HTTP error page like any other page',
    async run(engine, fixtureUrl) {
      const result = await engine.capture(captureRequest(fixtureUrl, '/status/404'));
      await assertImage(result, 'png', 1920, 1080);
      assert.ok(result.html?.includes('status 404'));
    },
  },

  {
    name: 'gives every capture a fresh context: no cookies or storage from an earlier one',
    async run(engine, fixtureUrl) {
      for (let i = 0; i < 2; i++) {
        const result = await engine.capture(captureRequest(fixtureUrl, '/visit.html'));
        assert.ok(result.html?.includes('earlier visits: 0, cookie: no'), `visit ${i + 1} saw a fresh profile`);
      }
    },
  },

  {
    name: 'fails a page that never answers with a clear time-out message',
    async run(engine, fixtureUrl) {
      const started = Date.now();
      const err = await rejection(engine.capture(captureRequest(fixtureUrl, '/hang', { navigationTimeoutMs: 2_000 })));
      assert.equal(err.name, 'CaptureError');
      assert.match(err.message, /^Timed out after 2 s loading http:\/\/127\.0\.0\.1:\d+\/hang$/);
      assert.ok(Date.now() - started < 10_000, 'within its time-out');
    },
  },

  {
    name: 'fails a refused connection saying so',
    async run(engine) {
      const port = await closedPort();
      const url = `http://127.0.0.1:${port}/`;
      const err = await rejection(engine.capture(captureRequest('', url)));
      assert.equal(err.name, 'CaptureError');
      assert.equal(err.message, `Could not load ${url}: the connection was refused`);
    },
  },

  {
    name: 'fails a page stuck in an endless script loop within its time-out, and captures the next page',
    async run(engine, fixtureUrl) {
      const started = Date.now();
      const err = await rejection(
        engine.capture(captureRequest(fixtureUrl, '/loop.html', { navigationTimeoutMs: 5_000, captureTimeoutMs: 3_000 })),
      );
      assert.equal(err.name, 'CaptureError');
      assert.match(err.message, /Timed out after \d+ s/);
      assert.ok(Date.now() - started < 5_000 + 3_000 + 10_000, 'within its time-outs and the clean-up bound');
      await assertCapturesAfterwards(engine, fixtureUrl);
    },
  },

  {
    name: 'fails a page that allocates memory in an endless loop, and captures the next page',
    async run(engine, fixtureUrl) {
      const started = Date.now();
      const err = await rejection(
        engine.capture(captureRequest(fixtureUrl, '/memory-hog.html?mb=256', { navigationTimeoutMs: 5_000, captureTimeoutMs: 3_000 })),
      );
      assert.equal(err.name, 'CaptureError');
      assert.ok(Date.now() - started < 5_000 + 3_000 + 10_000, 'within its time-outs and the clean-up bound');
      await assertCapturesAfterwards(engine, fixtureUrl);
    },
  },

  {
    name: 'stops a capture when its signal is aborted',
    async run(engine, fixtureUrl) {
      const controller = new AbortController();
      const reason = new Error('stopped by the test');
      setTimeout(() => controller.abort(reason), 500);
      const started = Date.now();
      const err = await rejection(
        engine.capture(captureRequest(fixtureUrl, '/hang', { navigationTimeoutMs: 20_000, signal: controller.signal })),
      );
      assert.equal(err, reason);
      assert.ok(Date.now() - started < 5_000, 'promptly');
      await assertCapturesAfterwards(engine, fixtureUrl);
    },
  },

  {
    name: 'reports a browser crash as BrowserCrashedError and captures again afterwards',
    requires: 'crashBrowser',
    async run(engine, fixtureUrl, hooks) {
      if (!hooks?.crashBrowser) return;
      const path = `/hang?crash=${Date.now()}`;
      const capture = engine.capture(captureRequest(fixtureUrl, path, { navigationTimeoutMs: 20_000 }));
      // Crashed while the page is loading: once the fixture server has the page's request.
      await untilRequested(fixtureUrl, path, 20_000);
      const started = Date.now();
      await hooks.crashBrowser(engine);
      const err = await rejection(capture);
      assert.equal(err.name, 'BrowserCrashedError');
      assert.ok(Date.now() - started < 10_000, 'promptly');
      await assertCapturesAfterwards(engine, fixtureUrl);
    },
  },
];
