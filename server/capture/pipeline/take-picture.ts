import { pageFacts, settleAndMeasure } from '../in-page/page-scripts.js';
import { NOTHING_PROBED, probeArguments, probePage } from '../in-page/warning-probe.js';
import { resizeAsked } from '../options/image-size.js';
import { selectorClip } from '../options/option-steps.js';
import { clipFor, clipForRect } from './capture-clip.js';
import type { Capture, Taken } from './capture-state.js';
import { evaluate } from './page-driver.js';
import { onFinalDocument } from './page-navigation.js';
import { printPdf } from './page-pdf.js';
import { documentSource, screenshot } from './page-screenshot.js';

// The picture of the page (or its PDF) with what goes with it: the document's source and facts,
// and what the page showed of itself as it was taken (the warnings' page-side half).

/**
 * Measures the page, then takes the screenshot while Chromium serialises the document. The
 * page may use the bitmap's size in memory beyond its limit meanwhile (`allowMemory`).
 */
export async function screenshotOnce({ driver, frame, traffic, request, options, asked, settle }: Capture): Promise<Taken> {
  const frameFallbackMs = options.frameFallbackMs ?? 0;
  const dpr = request.preset.deviceScaleFactor;
  const geometry = await evaluate(driver, settleAndMeasure, { waitForFrame: false });
  const rect = asked.selector ? await selectorClip(driver, asked.selector) : asked.clip;
  const { clip, truncated, cut, bitmapBytes } = rect
    ? clipForRect(rect, request.format, dpr, options.clipDpr, asked.selector ? 'element' : 'clip')
    : clipFor(geometry, request, dpr, options.clipDpr);
  options.allowMemory?.(bitmapBytes);
  // Page.captureScreenshot issued as the page commits a new document never answers.
  const beyondViewport = request.fullPage || rect !== undefined;
  const shot = screenshot(driver, clip, { beyondViewport, fast: request.format !== 'png' || resizeAsked(asked), frameFallbackMs });
  shot.catch(() => undefined);
  const source = documentSource(driver, request.maxSourceBytes);
  source.catch(() => undefined);
  const facts = evaluate(driver, pageFacts, null);
  facts.catch(() => undefined);
  // What the page shows of itself as the picture is taken: the warnings' page-side half.
  const inFlight = traffic.inFlightUrls(settle?.settled === true);
  const area = { x: clip.x, y: clip.y, width: clip.width, height: clip.height, overlay: true, blocked: [...traffic.blockedByCapture] };
  // A warning never fails the job: a page that broke what the probe calls only goes without its warnings.
  const probe = evaluate(driver, probePage, probeArguments(area)).catch(() => NOTHING_PROBED);
  const png = await Promise.race([
    shot,
    frame.nextNavigation().then((): never => {
      throw new Error('The page navigated during the screenshot');
    }),
  ]);
  return { png, inFlight, truncated, html: await source, page: await facts, probe: await probe, cut };
}

/** The page printed to PDF (A4), with its source and facts, on its final document; a PDF is never cut. */
export async function printOnce({ driver, frame, traffic, request }: Capture): Promise<Taken> {
  return onFinalDocument(frame, async () => {
    const everything = { x: 0, y: 0, width: Number.MAX_SAFE_INTEGER, height: Number.MAX_SAFE_INTEGER, overlay: false, blocked: [...traffic.blockedByCapture] };
    const inFlight = traffic.inFlightUrls();
    const [data, html, page, probe] = await Promise.all([
      printPdf(driver),
      documentSource(driver, request.maxSourceBytes),
      evaluate(driver, pageFacts, null),
      evaluate(driver, probePage, probeArguments(everything)).catch(() => NOTHING_PROBED),
    ]);
    return { png: data, inFlight, truncated: false, html, page, probe, cut: null };
  });
}
