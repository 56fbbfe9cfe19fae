import { CAPTURE_STEPS } from './capture-steps.js';
import type { CaptureRequest, CaptureResult } from './engine.js';
import { atDocumentAddress } from './options/html-document.js';
import { captureWarnings } from './outputs/capture-warnings.js';
import { pngSize } from './outputs/png-size.js';
import type { Capture, PipelineOptions } from './pipeline/capture-state.js';
import { MainFrame } from './pipeline/main-frame.js';
import { PageConsole } from './pipeline/page-console.js';
import type { PageDriver } from './pipeline/page-driver.js';
import { PageTraffic } from './pipeline/page-traffic.js';
import { runSteps } from './pipeline/step-combinators.js';

export type { PipelineOptions };

/**
 * Captures the page behind `driver` as `request` asks, the same way for every engine: runs
 * CAPTURE_STEPS (capture-steps.ts) over it, which load the page within the navigation time-out
 * and take its picture within the capture time-out, and returns what they found. Failures from
 * outside the page (the tripwire) win over what a step was doing. The page is the engine's to
 * dispose of afterwards, whatever happened.
 */
export async function capturePage(driver: PageDriver, asked: CaptureRequest, options: PipelineOptions): Promise<CaptureResult> {
  const request = atDocumentAddress(asked);
  const frame = new MainFrame(driver);
  const traffic = new PageTraffic(driver, frame, options.proxyServer);
  const pageConsole = new PageConsole(driver, frame);
  const capture: Capture = {
    driver,
    frame,
    traffic,
    console: pageConsole,
    request,
    options,
    asked: request.options ?? {},
    stopHeaders: () => undefined,
    navigationStarted: 0,
    deadline: 0,
    requestsSeen: 0,
    blank: null,
  };
  try {
    await runSteps(capture, CAPTURE_STEPS);
    await traffic.lateRefusals();
    return await resultOf(capture);
  } catch (err) {
    // A step cut short by the page or the browser going away says so, not what it was doing.
    throw options.tripwire.error ? options.tripwire.error.error : err;
  } finally {
    capture.stopHeaders();
    capture.exchanges?.dispose();
    pageConsole.dispose();
    traffic.dispose();
    frame.dispose();
  }
}

/** What the steps found, as the engine returns it: the image, the page's source and facts, the warnings and outputs. */
async function resultOf({ request, options, asked, traffic, console, taken, blank, settle, image, extracted, recorded }: Capture): Promise<CaptureResult> {
  if (!taken || !image) throw new Error('The capture steps took no picture');
  const { warnings: extractWarnings = [], ...outputs } = extracted ?? {};
  const warnings = await captureWarnings({
    blank,
    probe: taken.probe,
    picture: request.format === 'pdf' ? null : taken.png,
    settle: settle ?? null,
    inFlight: taken.inFlight,
    truncated: taken.truncated ? taken.cut : null,
    httpStatus: traffic.mainDocumentStatus,
    console: console.errorsOfDocument(),
  });
  return {
    image: image.data,
    format: request.format,
    width: image.width,
    height: image.height,
    // The screenshot is in device pixels; a resize changed its width by image.width / its own.
    pictureScale: request.format === 'pdf' ? 1 : (request.preset.deviceScaleFactor * image.width) / pngSize(taken.png).width,
    truncated: taken.truncated,
    html: taken.html,
    userAgent: asked.userAgent ?? options.userAgent,
    blockedRequests: traffic.blockedRequests,
    httpStatus: traffic.mainDocumentStatus,
    finalUrl: taken.page.url,
    pageTitle: taken.page.title,
    warnings: warnings.concat(extractWarnings),
    ...(extracted ? { extracted: outputs } : {}),
    ...(recorded ? { exchanges: recorded } : {}),
  };
}
