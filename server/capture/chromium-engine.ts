import type { Page } from 'playwright-core';
import { withDeadline } from '../deadline.js';
import { isTunnelRefusal } from '../egress/proxy-markers.js';
import { BrowserSlot } from './browser-slot.js';
import { clipFor, type Clip } from './capture-clip.js';
import { captureTimedOut, navigationFailure, pageOutOfMemory } from './capture-failures.js';
import { chromiumCommandLine, type ChromiumCommandLine } from './chromium-switches.js';
import type { JobContextOptions, JobPage } from './context-prewarmer.js';
import {
  BrowserCrashedError,
  PageCrashedError,
  type CaptureEngine,
  type CaptureRequest,
  type CaptureResult,
} from './engine.js';
import { DEFAULT_QUALITY, encodeScreenshot, type EncodedImage } from './image-encoder.js';
import { scrollThroughPage, settleAndMeasure } from './page-scripts.js';
import { PageTraffic } from './page-traffic.js';
import { userAgentFor } from './presets.js';
import { NETWORK_IDLE_MAX_MS, scrollTimeLimitMs, takeOnceQuiet } from './quiet-network.js';
import { Tripwire } from './tripwire.js';
import { tunnelFailure } from './tunnel-failure.js';

export interface ChromiumEngineOptions {
  /** The Chromium executable, usually from findChromium(). */
  executablePath: string;
  /** Captures one browser process serves before a fresh one replaces it. @default 200 */
  recycleAfter?: number;
  /**
   * Egress proxy every browser connection goes through, loopback included: the switches of
   * egressChromiumArgs() (`--proxy-server`, `--proxy-bypass-list=<-loopback>`, no WebRTC UDP,
   * no QUIC). Contexts always block service workers. @default none: direct connections
   */
  proxyServer?: string;
  /** More Chromium switches, after ours. @default [] */
  extraArgs?: string[];
  /** Where the engine reports relaunches and hung browsers. @default silent */
  log?: (line: string) => void;
  /**
   * Fresh contexts kept ready for a stream of one kind of job (and one of each other kind
   * recently captured: ContextPrewarmer). Two, so that two jobs arriving together (the
   * default concurrency) each find one ready; in a steady stream one or two make no measurable
   * difference (2.37 against 2.38 captures/s back to back, 2.77 against 2.81 two at a time, the
   * benchmark's mix in-process). A spare is a renderer process: the service's peak memory in the
   * benchmark was 26–66 MiB higher with two. @default 2
   */
  prewarm?: number;
  /** Time allowed for Chromium to start. @default 30000 */
  launchTimeoutMs?: number;
  /**
   * Resident memory a page's renderer may use, in MiB; a renderer above it is killed and its
   * capture fails saying so (PageMemoryGuard). @default 2048
   */
  pageMemoryMb?: number;
}

const DEFAULT_PAGE_MEMORY_MB = 2048;

/** Time a page that navigated again by script gets to load its new document. */
const SETTLE_AFTER_NAVIGATION_MS = 5_000;
/** A browser that cannot open a context in this long is considered hung. */
const OPEN_JOB_TIMEOUT_MS = 10_000;
/** A context that does not close in this long has a hung renderer; the browser is killed. */
const CLOSE_JOB_TIMEOUT_MS = 5_000;
/**
 * Captures pages in the system Chromium through playwright-core: one browser process, a fresh
 * isolated context per capture, screenshots through CDP: PNG as Chromium encodes it, JPEG and
 * WebP from a quickly compressed PNG re-encoded off the browser thread. A hung or crashed
 * browser is killed and relaunched; the browser is replaced after `recycleAfter` captures
 * without disturbing running ones.
 */
export class ChromiumEngine implements CaptureEngine {
  readonly name = 'chromium';
  private readonly recycleAfter: number;
  private readonly commandLine: ChromiumCommandLine;
  private readonly log: (line: string) => void;
  /** The browser new captures go to. */
  private current: BrowserSlot | undefined;
  private launching: Promise<BrowserSlot> | undefined;
  /** Every live browser, retiring ones included. */
  private readonly slots = new Set<BrowserSlot>();
  private version: string | undefined;
  private closed = false;

  constructor(private readonly options: ChromiumEngineOptions) {
    this.recycleAfter = Math.max(1, options.recycleAfter ?? 200);
    this.log = options.log ?? (() => undefined);
    this.commandLine = chromiumCommandLine(options.proxyServer, options.extraArgs);
  }

  async start(): Promise<void> {
    await this.currentSlot();
  }

  isReady(): boolean {
    if (this.closed) return false;
    return [...this.slots].some((slot) => slot.isConnected);
  }

  chromiumVersion(): string {
    if (!this.version) throw new Error('ChromiumEngine.chromiumVersion() is known only after start()');
    return this.version;
  }

  /**
   * Settles once the current browser has answered or been found gone, so that isReady() is
   * true only of a browser that is still there. EnginePool asks this of its other engines
   * after one browser crashed: whatever killed it (the OOM killer, `pkill chromium`) may have
   * killed the others too, and the job's retry should not be sent to one of them.
   */
  async checkBrowser(): Promise<void> {
    await this.current?.ping();
  }

  /** The current browser's process id (for diagnostics and crash tests). */
  browserPid(): number | undefined {
    return this.current?.pid;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.launching?.catch(() => undefined);
    this.current = undefined;
    await Promise.all([...this.slots].map((slot) => slot.close()));
  }

  async capture(request: CaptureRequest): Promise<CaptureResult> {
    if (this.closed) throw new Error('ChromiumEngine is closed');
    request.signal?.throwIfAborted();
    const slot = await this.acquire();
    let closing: Promise<void> = Promise.resolve();
    try {
      return await this.captureOn(slot, request, (p) => (closing = p));
    } finally {
      // The slot counts the capture until its context is closed, so recycling waits for it.
      void closing.finally(() => this.release(slot));
    }
  }

  /**
   * Runs one capture in a fresh context. After a success the context closes in the background
   * (reported through `onClosing`) while the caller stores the result; after a failure it is
   * closed — or the browser killed — before the error is thrown, so the next capture finds a
   * healthy browser.
   */
  private async captureOn(
    slot: BrowserSlot,
    request: CaptureRequest,
    onClosing: (closing: Promise<void>) => void,
  ): Promise<CaptureResult> {
    const { url, preset, signal } = request;
    const viewport = request.viewport ?? { width: preset.width, height: preset.height };
    const userAgent = userAgentFor(preset, request.googlebot, slot.version);
    const contextOptions: JobContextOptions = {
      viewport,
      deviceScaleFactor: preset.deviceScaleFactor,
      isMobile: preset.isMobile,
      hasTouch: preset.hasTouch,
      userAgent,
    };

    const tripwire = new Tripwire();
    const stopWatchingBrowser = slot.onGone(() =>
      tripwire.trip(new BrowserCrashedError(`Chromium exited while capturing ${url}`)),
    );
    const onAbort = () => tripwire.trip(signal?.reason ?? new Error('The capture was aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const stopWatching = () => {
      stopWatchingBrowser();
      signal?.removeEventListener('abort', onAbort);
    };

    const opening = slot.openJob(contextOptions);
    let job: JobPage;
    try {
      job = await tripwire.race(
        withDeadline(opening, OPEN_JOB_TIMEOUT_MS, () => new BrowserCrashedError('Chromium did not open a page in time')),
      );
    } catch (err) {
      stopWatching();
      void opening.then((late) => late.context.close()).catch(() => undefined);
      if (err instanceof BrowserCrashedError && slot.isConnected) await this.kill(slot, 'it did not open a page in time');
      throw this.explain(err, slot, tripwire, signal);
    }

    job.page.once('crash', () => {
      // Whether our guard killed it decides: that page fails, any other death is retried.
      const limit = slot.pageKilledForMemory();
      tripwire.trip(limit === undefined ? new PageCrashedError(url) : pageOutOfMemory(url, limit));
    });
    const traffic = new PageTraffic(job.page, this.options.proxyServer);
    // Memory the page's renderer may use beyond the limit for the screenshot's bitmap, held until
    // the context (and with it the renderer, which keeps that memory) is closed.
    let releaseMemory = () => {};
    const allowMemory = (bytes: number) => {
      releaseMemory();
      releaseMemory = slot.allowPageMemory(bytes);
    };
    const finish = () => {
      stopWatching();
      traffic.dispose();
      const closing = this.closeJob(slot, job);
      void closing.finally(() => releaseMemory());
      onClosing(closing.then(() => undefined));
      slot.prepareNext(contextOptions);
      return closing;
    };
    let result: CaptureResult;
    try {
      result = await this.run(job, traffic, request, userAgent, tripwire, allowMemory);
    } catch (err) {
      const explained = this.explain(err, slot, tripwire, signal);
      // A browser that cannot even close a context has hung (and was killed), which is not
      // the page's fault: the job deserves its retry.
      const closed = await finish();
      if (closed !== 'closed' && !signal?.aborted && !(explained instanceof BrowserCrashedError)) {
        throw new BrowserCrashedError(`Chromium stopped answering while capturing ${url}`);
      }
      throw explained;
    }
    void finish();
    return result;
  }

  private async run(
    job: JobPage,
    traffic: PageTraffic,
    request: CaptureRequest,
    userAgent: string,
    tripwire: Tripwire,
    allowMemory: (bytes: number) => void,
  ): Promise<CaptureResult> {
    const { url, navigationTimeoutMs, captureTimeoutMs } = request;
    const { page } = job;
    const navigationStarted = Date.now();
    let response;
    try {
      // DOMContentLoaded is the bar for failing: a page whose document arrived but whose
      // `load` never fires (one stalled image) is still captured when the time is up.
      response = await tripwire.race(page.goto(url, { waitUntil: 'domcontentloaded', timeout: navigationTimeoutMs }));
    } catch (err) {
      if (tripwire.error) throw err;
      // A refused tunnel: the proxy says why. The requestfailed event names the document's
      // address (one the page redirected to, maybe); without it, the address asked for.
      if (isTunnelRefusal(String(err))) {
        throw (await traffic.mainDocumentFailure(url)) ?? (await tunnelFailure(this.options.proxyServer, url, url));
      }
      throw navigationFailure(err, url, navigationTimeoutMs);
    }
    if (response) traffic.noteResponse(response);
    const throwIfNotThePage = async () => {
      const failure = await traffic.mainDocumentFailure(url);
      if (failure) throw failure;
    };
    await throwIfNotThePage();

    const loadLeft = navigationTimeoutMs - (Date.now() - navigationStarted);
    await tripwire.race(page.waitForLoadState('load', { timeout: Math.max(1, loadLeft) })).catch((err: unknown) => {
      if (tripwire.error) throw err;
      this.log(`chromium: ${url} did not fire load within ${navigationTimeoutMs} ms; capturing what is there`);
    });
    // Requests started before or in the load handlers are already in flight: wait for those.
    // Whatever a page starts after `load` is caught by shoot(), which then takes the picture again.
    await tripwire.race(traffic.networkIdle(NETWORK_IDLE_MAX_MS, 0));
    await throwIfNotThePage();
    report(request, 40);

    const { image, truncated, html } = await withDeadline(
      tripwire.race(this.shoot(job, traffic, request, traffic.requestsStarted(), allowMemory)),
      captureTimeoutMs,
      () => captureTimedOut(url, captureTimeoutMs),
    );
    await throwIfNotThePage();
    report(request, 70);
    return {
      image: image.data,
      format: request.format,
      width: image.width,
      height: image.height,
      truncated,
      html: html !== null && Buffer.byteLength(html, 'utf8') <= request.maxSourceBytes ? html : null,
      userAgent,
      blockedRequests: traffic.blockedRequests,
    };
  }

  /**
   * Scrolls (a full page that loads content on scrolling), measures, screenshots and
   * serialises the page. A page that navigates by script while this runs (a redirect right
   * after `load`) gets the work done again on its new document, so the image and the HTML are
   * of the same, final page.
   *
   * `requestsSeen` is the page's request count when its network was last found idle. A page
   * that started more requests meanwhile (a timer right after `load`, a fetch chained to
   * another) is captured again once they are done (takeOnceQuiet).
   */
  private async shoot(
    job: JobPage,
    traffic: PageTraffic,
    request: CaptureRequest,
    requestsSeen: number,
    allowMemory: (bytes: number) => void,
  ): Promise<{ image: EncodedImage; truncated: boolean; html: string | null }> {
    const { page } = job;
    if (request.fullPage) {
      const scroll = { maxMs: scrollTimeLimitMs(request.captureTimeoutMs), maxHeight: request.maxHeight, onlyWhenLazy: true };
      const steps = await onFinalDocument(page, traffic, () => page.evaluate(scrollThroughPage, scroll));
      if (steps > 0) {
        await traffic.networkIdle(NETWORK_IDLE_MAX_MS);
        requestsSeen = traffic.requestsStarted();
      }
    }
    const { png, truncated, html } = await onFinalDocument(page, traffic, () =>
      takeOnceQuiet(traffic, requestsSeen, () => this.screenshotOnce(job, traffic, request, allowMemory)),
    );
    // JPEG and WebP encoding runs on libvips threads.
    const image = request.format === 'png' ? pngAsIs(png) : await encodeScreenshot(png, request.format, request.quality ?? DEFAULT_QUALITY);
    return { image, truncated, html };
  }

  /**
   * Measures the page, then takes the screenshot while Chromium serialises the document. The
   * page may use the bitmap's size in memory beyond its limit meanwhile (`allowMemory`).
   */
  private async screenshotOnce(
    job: JobPage,
    traffic: PageTraffic,
    request: CaptureRequest,
    allowMemory: (bytes: number) => void,
  ): Promise<{ png: Buffer; truncated: boolean; html: string | null }> {
    const { page } = job;
    const dpr = request.preset.deviceScaleFactor;
    const geometry = await page.evaluate(settleAndMeasure, { waitForFrame: false });
    const { clip, truncated, bitmapBytes } = clipFor(geometry, request, dpr, dpr);
    allowMemory(bitmapBytes);
    // Page.captureScreenshot issued as the page commits a new document never answers.
    const shot = screenshot(job, clip, request.fullPage, request.format !== 'png');
    shot.catch(() => undefined);
    const source = documentSource(job);
    source.catch(() => undefined);
    const png = await Promise.race([
      shot,
      traffic.nextNavigation().then((): never => {
        throw new Error('The page navigated during the screenshot');
      }),
    ]);
    return { png, truncated, html: await source };
  }

  /** Why a capture failed, in the terms the job service acts on. */
  private explain(err: unknown, slot: BrowserSlot, tripwire: Tripwire, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason ?? err;
    if (!slot.isConnected) {
      return err instanceof BrowserCrashedError ? err : new BrowserCrashedError(`Chromium exited during the capture: ${String(err)}`);
    }
    return tripwire.error ? tripwire.error.error : err;
  }

  /** Closes a job's context, killing the browser when that does not finish in time. */
  private async closeJob(slot: BrowserSlot, job: JobPage): Promise<'closed' | 'killed' | 'gone'> {
    if (!slot.isConnected) return 'gone';
    try {
      await withDeadline(job.context.close(), CLOSE_JOB_TIMEOUT_MS, () => new Error('context close timed out'));
      return 'closed';
    } catch {
      if (!slot.isConnected) return 'gone';
      await this.kill(slot, `a context did not close within ${CLOSE_JOB_TIMEOUT_MS} ms`);
      return 'killed';
    }
  }

  private async kill(slot: BrowserSlot, why: string): Promise<void> {
    this.log(`chromium: killing the browser (pid ${slot.pid ?? 'unknown'}) because ${why}`);
    if (this.current === slot) this.current = undefined;
    await slot.kill();
  }

  private async acquire(): Promise<BrowserSlot> {
    const slot = await this.currentSlot();
    slot.captures++;
    slot.inFlight++;
    if (slot.captures >= this.recycleAfter && this.current === slot) {
      // Later captures go to a new browser; this one closes when its last capture ends.
      slot.retire();
      this.current = undefined;
      this.launchInBackground('recycling the browser');
    }
    return slot;
  }

  private release(slot: BrowserSlot): void {
    slot.inFlight--;
    if (slot.retiring && slot.inFlight === 0) void slot.close();
  }

  private currentSlot(): Promise<BrowserSlot> {
    if (this.current?.isConnected) return Promise.resolve(this.current);
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<BrowserSlot> {
    if (this.closed) throw new Error('ChromiumEngine is closed');
    const slot = await BrowserSlot.launch({
      executablePath: this.options.executablePath,
      ...this.commandLine,
      prewarm: Math.max(0, this.options.prewarm ?? 2),
      pageMemoryLimitBytes: (this.options.pageMemoryMb ?? DEFAULT_PAGE_MEMORY_MB) * 2 ** 20,
      launchTimeoutMs: this.options.launchTimeoutMs ?? 30_000,
      log: this.log,
    });
    if (this.closed) {
      await slot.close();
      throw new Error('ChromiumEngine is closed');
    }
    this.version = slot.version;
    this.slots.add(slot);
    this.current = slot;
    void slot.gone.then(() => this.onGone(slot));
    return slot;
  }

  private onGone(slot: BrowserSlot): void {
    this.slots.delete(slot);
    if (this.current !== slot) return;
    this.current = undefined;
    if (!this.closed) this.launchInBackground('the browser exited');
  }

  private launchInBackground(why: string): void {
    if (this.closed) return;
    this.log(`chromium: starting a new browser (${why})`);
    this.currentSlot().catch((err: unknown) => this.log(`chromium: could not start the browser: ${String(err)}`));
  }
}

function report(request: CaptureRequest, progress: number): void {
  try {
    request.onProgress?.(progress);
  } catch {
    // A progress listener's failure is not the capture's.
  }
}

/** What playwright and CDP answer when the document went away under a call. */
const NAVIGATED_AWAY =
  /Execution context was destroyed|because of a navigation|page is navigating|navigated during|Not attached to an active page/i;
/** Times work is redone for a page that keeps navigating; the last result stands. */
const NAVIGATION_RETRIES = 2;

/**
 * Runs page work until it completes on one document: when the main frame navigated while it
 * ran (it failed, or the document changed under it), waits for the new document to load and
 * runs it again, a bounded number of times.
 */
async function onFinalDocument<R>(page: Page, traffic: PageTraffic, work: () => Promise<R>): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    const navigations = traffic.mainFrameNavigations;
    try {
      const result = await work();
      if (traffic.mainFrameNavigations === navigations || attempt >= NAVIGATION_RETRIES) return result;
    } catch (err) {
      if (!NAVIGATED_AWAY.test(String(err)) || attempt >= NAVIGATION_RETRIES) throw err;
    }
    if (traffic.mainFrameNavigations === navigations) {
      // The navigation has started but not committed yet.
      await page
        .waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: SETTLE_AFTER_NAVIGATION_MS })
        .catch(() => undefined);
    }
    await page.waitForLoadState('load', { timeout: SETTLE_AFTER_NAVIGATION_MS }).catch(() => undefined);
  }
}

/**
 * A PNG from Page.captureScreenshot. For a PNG result Chromium's own encoding is kept as it is:
 * measured on 2-core machines with Chromium 156, capturing with `optimizeForSpeed` and
 * re-encoding with sharp cost more CPU per capture (146/947/350 ms against 67/606/97 ms on the
 * benchmark's three pages) than it saved, for files 0.81–0.93 of the size. For JPEG and WebP
 * the PNG only feeds the encoder, so it is taken with `optimizeForSpeed` (`fast`). Retried when
 * Chromium answers "Unable to capture screenshot", which it does now and then right after a
 * layout change, until the next frame.
 */
async function screenshot(job: JobPage, clip: Clip, beyondViewport: boolean, fast: boolean): Promise<Buffer> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { data } = await job.cdp.send('Page.captureScreenshot', {
        format: 'png',
        optimizeForSpeed: fast,
        captureBeyondViewport: beyondViewport,
        clip,
      });
      return Buffer.from(data, 'base64');
    } catch (err) {
      if (attempt >= 3 || !/Unable to capture screenshot/i.test(String(err))) throw err;
      await job.page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => resolve())));
    }
  }
}

/**
 * The page's markup as Chromium serialises its document (DOM.getOuterHTML of the document node):
 * the doctype and the root element, as `page.content()` gives them, and any comment beside them.
 * No script runs for it, in the page or in an isolated world. On a fresh page it takes 8–9 ms
 * where `page.content()`, which first installs playwright's helper script in a world of its own,
 * takes 25–34 ms (the benchmark's small and 10,000 px pages), and about 20 ms less CPU.
 */
export async function documentSource(job: JobPage): Promise<string> {
  const { root } = await job.cdp.send('DOM.getDocument', { depth: 0 });
  const { outerHTML } = await job.cdp.send('DOM.getOuterHTML', { nodeId: root.nodeId });
  return outerHTML;
}

/** Chromium's own PNG, kept as it is: its size read from the IHDR chunk. */
function pngAsIs(png: Buffer): EncodedImage {
  return { data: png, width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
