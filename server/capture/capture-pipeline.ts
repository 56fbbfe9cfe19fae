import { withDeadline } from '../deadline.js';
import type { Logger } from '../logger.js';
import { captureTimedOut, loadTimedOut } from './capture-failures.js';
import type { CaptureOptions } from './capture-options.js';
import type { CaptureRequest, CaptureResult } from './engine.js';
import { documentHeight, expandScrollingContainer, type PageFacts, pageFacts, renderSkippedContent, scrollThroughPage, settleAndMeasure } from './in-page/page-scripts.js';
import { NOTHING_PROBED, type PageProbe, probeArguments, probePage } from './in-page/warning-probe.js';
import { dismissConsentDialogs, prepareConsentDialogs } from './options/consent-dialogs.js';
import { atDocumentAddress, serveDocument } from './options/html-document.js';
import { resizeAsked, resizeImage } from './options/image-size.js';
import { A4_POINTS, beforeCapture, beforeNavigation, httpErrorAnswered, NETWORK_IDLE_QUIET_MS, printPdf, selectorClip } from './options/option-steps.js';
import { omitBackground } from './options/page-background.js';
import { blockRequests } from './options/request-blocking.js';
import { type BlankCheck, captureWarnings, retakeIfBlank, type TakenPicture } from './outputs/capture-warnings.js';
import { extractOutputs } from './outputs/extract.js';
import { captureImage, type EncodedImage } from './outputs/image-encoder.js';
import { clipFor, clipForRect } from './pipeline/capture-clip.js';
import { MainFrame } from './pipeline/main-frame.js';
import { PageConsole } from './pipeline/page-console.js';
import { evaluate, type PageDriver } from './pipeline/page-driver.js';
import { navigate, onFinalDocument, preparePage } from './pipeline/page-navigation.js';
import { documentSource, screenshot } from './pipeline/page-screenshot.js';
import { PageTraffic } from './pipeline/page-traffic.js';
import { NETWORK_IDLE_MAX_MS, scrollTimeLimitMs, takeOnceQuiet } from './pipeline/quiet-network.js';
import type { Tripwire } from './pipeline/tripwire.js';

/** What an engine tells the pipeline about its page, beyond the driver. */
export interface PipelineOptions {
  /** The user agent the engine set up the page with; the result reports it. */
  userAgent: string;
  /**
   * Failures from outside the page (the browser gone, the renderer crashed, the caller's abort,
   * the engine closing): every step loses to them, and the capture fails with the first.
   */
  tripwire: Tripwire;
  /**
   * The device pixel ratio the screenshot's clip must carry itself (clipFor's `clipDpr`): 1 when
   * the driver's own session emulates the device, as both engines' do; the preset's for a
   * session that does not.
   */
  clipDpr: number;
  /** A frame counts as rendered after this long without one, for a window that may render none. @default 0 (wait for it) */
  frameFallbackMs?: number;
  /** The egress proxy, asked why it refused a tunnel. @default none: direct connections */
  proxyServer?: string;
  /** Lets the page's renderer use this many bytes beyond its memory limit, for the screenshot's bitmap. @default none */
  allowMemory?: (bytes: number) => void;
  /** Where notes about a page go (one whose `load` never fired). @default silent */
  log?: Logger;
}

/** One capture on its way through the steps. */
interface Capture {
  driver: PageDriver;
  frame: MainFrame;
  traffic: PageTraffic;
  console: PageConsole;
  request: CaptureRequest;
  options: PipelineOptions;
  /** The request's options (none: `{}`). */
  asked: CaptureOptions;
  /** Stops sending the request's headers to the page's origin. */
  stopHeaders: () => void;
}

/**
 * Captures the page behind `driver` as `request` asks, the same way for every engine: prepare
 * (the events to follow, watchLazyLoading), navigate and wait for DOMContentLoaded (the bar for
 * failing) within the navigation time-out, then for `load` and the requests in flight; then,
 * within the capture time-out, scroll a full page that loads content on scrolling, measure,
 * clip, screenshot (again if the page went on loading meanwhile) and serialise the document.
 * Progress is reported at 40 (loaded) and 70 (captured). The page is the engine's to dispose of
 * afterwards, whatever happened.
 */
export async function capturePage(driver: PageDriver, asked: CaptureRequest, options: PipelineOptions): Promise<CaptureResult> {
  const request = atDocumentAddress(asked);
  const { tripwire } = options;
  const { url, captureTimeoutMs } = request;
  const frame = new MainFrame(driver);
  const traffic = new PageTraffic(driver, frame, options.proxyServer);
  const pageConsole = new PageConsole(driver, frame);
  const capture: Capture = { driver, frame, traffic, console: pageConsole, request, options, asked: request.options ?? {}, stopHeaders: () => undefined };
  try {
    await load(capture);
    report(request, 40);
    const captureDeadline = Date.now() + captureTimeoutMs;
    const { image, truncated, html, page, taken, blank } = await withDeadline(tripwire.race(shoot(capture, captureDeadline)), captureTimeoutMs, () =>
      captureTimedOut(url, captureTimeoutMs),
    );
    await throwIfNotThePage(traffic, url);
    // From the same document, before the page is closed; what fails is a warning, never the job's failure.
    const { warnings: extractWarnings, ...extracted } = capture.asked.extract?.length
      ? await tripwire.race(extractOutputs(driver, capture.asked.extract))
      : { warnings: [] };
    report(request, 70);
    return {
      image: image.data,
      format: request.format,
      width: image.width,
      height: image.height,
      truncated,
      html: Buffer.byteLength(html, 'utf8') <= request.maxSourceBytes ? html : null,
      userAgent: capture.asked.userAgent ?? options.userAgent,
      blockedRequests: traffic.blockedRequests,
      httpStatus: traffic.mainDocumentStatus,
      finalUrl: page.url,
      pageTitle: page.title,
      warnings: captureWarnings({
        blank,
        probe: taken.probe,
        inFlight: taken.inFlight,
        truncated: truncated ? taken.cut : null,
        httpStatus: traffic.mainDocumentStatus,
        console: pageConsole.errorsOfDocument(),
      }).concat(extractWarnings),
      ...(capture.asked.extract?.length ? { extracted } : {}),
    };
  } catch (err) {
    // A step cut short by the page or the browser going away says so, not what it was doing.
    throw tripwire.error ? tripwire.error.error : err;
  } finally {
    capture.stopHeaders();
    pageConsole.dispose();
    traffic.dispose();
    frame.dispose();
  }
}

/**
 * Loads the page within the navigation time-out: DOMContentLoaded or a failure, then `load`
 * (a page whose `load` never fires is captured as it is when the time is up), then a bounded
 * wait for the requests in flight.
 */
async function load(capture: Capture): Promise<void> {
  const { driver, frame, traffic, request, options, asked } = capture;
  const { url, navigationTimeoutMs } = request;
  const started = Date.now();
  await withDeadline(
    options.tripwire.race(
      (async () => {
        await serveDocument(driver, url, asked);
        const [, , , stopHeaders] = await Promise.all([
          preparePage(driver, frame),
          blockRequests(driver, url, asked),
          prepareConsentDialogs(driver, asked),
          beforeNavigation(driver, url, options.userAgent, asked),
          omitBackground(driver, asked),
          capture.console.start(),
        ]);
        capture.stopHeaders = stopHeaders;
        await navigate(driver, frame, traffic, url, options.proxyServer);
      })(),
    ),
    navigationTimeoutMs,
    () => loadTimedOut(url, navigationTimeoutMs),
  );
  await throwIfNotThePage(traffic, url);
  const status = traffic.mainDocumentStatus;
  if (asked.failOnHttpError && status !== null && status >= 400) throw httpErrorAnswered(status);
  if (asked.waitUntil === 'domcontentloaded') return;
  const loadLeft = navigationTimeoutMs - (Date.now() - started);
  if (!(await options.tripwire.race(frame.until(() => frame.reached('load'), loadLeft)))) {
    options.log?.info({ url }, `the page did not fire load within ${navigationTimeoutMs} ms; capturing what is there`);
  }
  if (asked.waitUntil === 'networkidle') {
    // Idle: no request in flight for NETWORK_IDLE_QUIET_MS, within what is left of the time-out.
    const idleLeft = Math.max(0, navigationTimeoutMs - (Date.now() - started));
    if (!(await options.tripwire.race(traffic.networkIdle(idleLeft, NETWORK_IDLE_QUIET_MS)))) {
      options.log?.info({ url }, `the network was not idle within ${navigationTimeoutMs} ms; capturing what is there`);
    }
  } else {
    // Requests started before or in the load handlers are already in flight: wait for those.
    // Whatever a page starts after `load` is caught by shoot(), which then takes the picture again.
    if (!(await options.tripwire.race(traffic.networkIdle(NETWORK_IDLE_MAX_MS, 0)))) {
      options.log?.debug({ url }, `requests were still in flight ${NETWORK_IDLE_MAX_MS} ms after load`);
    }
  }
  await throwIfNotThePage(traffic, url);
}

/**
 * Scrolls (a full page that loads content on scrolling), measures, screenshots and
 * serialises the page. A page that navigates by script while this runs (a redirect right
 * after `load`) gets the work done again on its new document, so the image and the HTML are
 * of the same, final page. A page that started more requests since its network was last found
 * idle (a timer right after `load`, a fetch chained to another) is captured again once they
 * are done (takeOnceQuiet).
 */
async function shoot(capture: Capture, deadline: number): Promise<Shot> {
  const { driver, frame, traffic, request, options, asked } = capture;
  await dismissConsentDialogs(driver, asked, request.captureTimeoutMs / 3);
  await onFinalDocument(frame, () => beforeCapture(driver, asked, deadline));
  if (request.format === 'pdf') return printed(capture);
  let requestsSeen = traffic.requestsStarted();
  if (request.fullPage && !asked.selector && !asked.clip) {
    await onFinalDocument(frame, () => evaluate(driver, renderSkippedContent, null));
    await onFinalDocument(frame, () => evaluate(driver, expandScrollingContainer, null));
    const scroll = {
      maxMs: scrollTimeLimitMs(request.captureTimeoutMs),
      maxHeight: request.maxHeight,
      onlyWhenLazy: true,
      frameFallbackMs: options.frameFallbackMs ?? 0,
    };
    const until = Date.now() + scroll.maxMs;
    let steps = await onFinalDocument(frame, () => evaluate(driver, scrollThroughPage, scroll));
    while (steps > 0) {
      const height = await onFinalDocument(frame, () => evaluate(driver, documentHeight, null));
      await traffic.networkIdle(NETWORK_IDLE_MAX_MS);
      const loading = traffic.requestsStarted() > requestsSeen;
      requestsSeen = traffic.requestsStarted();
      // A page that loaded something as it was scrolled, or grew once its requests were done (a
      // feed that fetches its next items as its end comes into view), is scrolled on from where
      // it ended, within the same bounds, until a pass loads nothing more.
      const left = until - Date.now();
      if (left <= 0 || height >= request.maxHeight) break;
      const grown = (await onFinalDocument(frame, () => evaluate(driver, documentHeight, null))) > height;
      if (!grown && !loading) break;
      const more = { ...scroll, maxMs: left, onlyWhenLazy: false, from: height };
      steps = await onFinalDocument(frame, () => evaluate(driver, scrollThroughPage, more));
    }
  }
  const first = await onFinalDocument(frame, () => takeOnceQuiet(traffic, requestsSeen, () => screenshotOnce(capture)));
  const blank = await retakeIfBlank(first, traffic, () => onFinalDocument(frame, () => screenshotOnce(capture)), deadline);
  const { png, truncated, html, page } = blank.shot;
  const image = await resizeImage(await captureImage(png, request.format, request.quality), request.format, request.quality, asked);
  return { image, truncated, html, page, taken: blank.shot, blank };
}

/** A capture's picture, its source and facts, and what its warnings are decided from. */
interface Shot {
  image: EncodedImage;
  truncated: boolean;
  html: string;
  page: PageFacts;
  taken: Taken;
  /** Null for a PDF. */
  blank: BlankCheck<TakenPicture> | null;
}

/** One screenshot with the page's source and facts, and what the page showed of itself as it was taken. */
interface Taken extends TakenPicture {
  truncated: boolean;
  html: string;
  page: PageFacts;
  probe: PageProbe;
  /** How much of the page a cut picture kept, of how much, in CSS pixels. */
  cut: { keptCssPx: number; pageCssPx: number };
}

/** The page printed to PDF (A4), with its source and facts; a PDF is never cut. */
async function printed({ driver, frame, traffic }: Capture): Promise<Shot> {
  return onFinalDocument(frame, async () => {
    const everything = { x: 0, y: 0, width: Number.MAX_SAFE_INTEGER, height: Number.MAX_SAFE_INTEGER, overlay: false, blocked: [...traffic.blockedByCapture] };
    const inFlight = traffic.inFlightUrls();
    const [data, html, page, probe] = await Promise.all([
      printPdf(driver),
      documentSource(driver),
      evaluate(driver, pageFacts, null),
      evaluate(driver, probePage, probeArguments(everything)).catch(() => NOTHING_PROBED),
    ]);
    const taken = { png: data, inFlight, truncated: false, html, page, probe, cut: { keptCssPx: 0, pageCssPx: 0 } };
    return { image: { data, ...A4_POINTS }, truncated: false, html, page, taken, blank: null };
  });
}

/**
 * Measures the page, then takes the screenshot while Chromium serialises the document. The
 * page may use the bitmap's size in memory beyond its limit meanwhile (`allowMemory`).
 */
async function screenshotOnce({ driver, frame, traffic, request, options, asked }: Capture): Promise<Taken> {
  const frameFallbackMs = options.frameFallbackMs ?? 0;
  const dpr = request.preset.deviceScaleFactor;
  const geometry = await evaluate(driver, settleAndMeasure, { waitForFrame: false });
  const rect = asked.selector ? await selectorClip(driver, asked.selector) : asked.clip;
  const { clip, truncated, bitmapBytes } = rect
    ? clipForRect(rect, request.format, dpr, options.clipDpr)
    : clipFor(geometry, request, dpr, options.clipDpr);
  options.allowMemory?.(bitmapBytes);
  // Page.captureScreenshot issued as the page commits a new document never answers.
  const beyondViewport = request.fullPage || rect !== undefined;
  const shot = screenshot(driver, clip, { beyondViewport, fast: request.format !== 'png' || resizeAsked(asked), frameFallbackMs });
  shot.catch(() => undefined);
  const source = documentSource(driver);
  source.catch(() => undefined);
  const facts = evaluate(driver, pageFacts, null);
  facts.catch(() => undefined);
  // What the page shows of itself as the picture is taken: the warnings' page-side half.
  const inFlight = traffic.inFlightUrls();
  const area = { x: clip.x, y: clip.y, width: clip.width, height: clip.height, overlay: true, blocked: [...traffic.blockedByCapture] };
  // A warning never fails the job: a page that broke what the probe calls only goes without its warnings.
  const probe = evaluate(driver, probePage, probeArguments(area)).catch(() => NOTHING_PROBED);
  const png = await Promise.race([
    shot,
    frame.nextNavigation().then((): never => {
      throw new Error('The page navigated during the screenshot');
    }),
  ]);
  const cut = { keptCssPx: clip.height, pageCssPx: rect ? rect.height : geometry.fullHeight };
  return { png, inFlight, truncated, html: await source, page: await facts, probe: await probe, cut };
}

/** Fails with the reason when the document shown is not the page asked for (the egress proxy's answer). */
async function throwIfNotThePage(traffic: PageTraffic, url: string): Promise<void> {
  const failure = await traffic.mainDocumentFailure(url);
  if (failure) throw failure;
}

function report(request: CaptureRequest, progress: number): void {
  try {
    request.onProgress?.(progress);
  } catch {
    // A progress listener's failure is not the capture's.
  }
}
