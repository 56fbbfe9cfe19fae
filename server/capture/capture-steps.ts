import { expandScrollingContainer, renderSkippedContent } from './in-page/page-scripts.js';
import { dismissConsentDialogs, prepareConsentDialogs } from './options/consent-dialogs.js';
import { serveDocument } from './options/html-document.js';
import { resizeImage } from './options/image-size.js';
import { beforeCapture, beforeNavigation, httpErrorAnswered, NETWORK_IDLE_QUIET_MS, selectorClip } from './options/option-steps.js';
import { omitBackground } from './options/page-background.js';
import { blockRequests } from './options/request-blocking.js';
import { applySession, checkSignedIn, signInWithForm } from './options/saved-login.js';
import { retakeIfBlank } from './outputs/capture-warnings.js';
import { extractOutputs } from './outputs/extract.js';
import { captureImage } from './outputs/image-encoder.js';
import type { Capture, CaptureStep } from './pipeline/capture-state.js';
import { scrollForLazyContent } from './pipeline/full-page-scroll.js';
import { evaluate } from './pipeline/page-driver.js';
import { PageExchanges } from './pipeline/page-exchanges.js';
import { navigate, onFinalDocument, preparePage } from './pipeline/page-navigation.js';
import { A4_POINTS } from './pipeline/page-pdf.js';
import { NETWORK_IDLE_MAX_MS, takeOnceQuiet } from './pipeline/quiet-network.js';
import { waitUntilSettled } from './pipeline/settle.js';
import { SETTLE_TIMEOUT_DEFAULT_MS } from './pipeline/settle-report.js';
import { navigationTimeLeft, together, when, withinCaptureTime, withinNavigationTime } from './pipeline/step-combinators.js';
import { printOnce, screenshotOnce } from './pipeline/take-picture.js';

// The capture as one list of steps, the same for every engine's page (capturePage runs it).
// A step is a small function over the capture in progress (Capture): it does one thing to the
// page and notes what it found. A new behaviour is one more line in CAPTURE_STEPS; the steps'
// functions follow the list, section by section, in its order.

/**
 * Every capture, in order: set the page up and navigate (DOMContentLoaded or a failure, within
 * the navigation time-out), wait for `load` and the requests in flight, then — within the capture
 * time-out — apply the options that come after load, and print a PDF or scroll a full page that
 * loads content on scrolling, screenshot it (again if the page went on loading meanwhile, or
 * came out blank while busy), encode and resize the picture; last, extract what was asked from
 * the same document, and for `evidence` the page's HTTP exchanges recorded all along. Progress is reported at 40 (loaded) and 70 (captured).
 */
export const CAPTURE_STEPS: readonly CaptureStep[] = [
  withinNavigationTime(
    serveHtmlDocument,
    together(
      followThePage,
      when(recordsEvidence, recordExchanges),
      blockAdsAndTrackers,
      refuseConsentDialogs,
      applyOptionsBeforeNavigation,
      makeBackgroundTransparent,
      countConsoleErrors,
      when(hasSavedSession, applySavedSession),
    ),
    when(signsInFirst, signInWithSavedLogin),
    navigateToPage,
  ),
  checkDocumentIsThePage,
  failOnHttpError,
  when(waitsPastDomContentLoaded, waitForLoadEvent, waitForNetwork, checkDocumentIsThePage),
  reportProgress(40),
  withinCaptureTime(
    hideConsentDialogs,
    when(waitsToSettle, waitForPageToSettle),
    applyOptionsBeforePicture,
    when(isPdf, printToPdf),
    when(isPicture, countRequestsSoFar),
    when(scrollsFullPage, renderHiddenContent, unfoldScrollingContainer, scrollForLazyContent),
    when(isPicture, takeScreenshot, retakeBlankPicture, encodeImage, resizePicture),
  ),
  checkDocumentIsThePage,
  when(hasSignedInLogin, checkStillSignedIn),
  when(extractAsked, extractFromPage),
  when(recordsEvidence, collectExchanges),
  reportProgress(70),
];

// Which captures a step is for.

function waitsPastDomContentLoaded({ asked }: Capture): boolean {
  return asked.waitUntil !== 'domcontentloaded';
}

/** `wait_until: settled`, which a picture waits for unless it asks otherwise (a PDF waits for `load`). */
function waitsToSettle(capture: Capture): boolean {
  return (capture.asked.waitUntil ?? (isPdf(capture) ? 'load' : 'settled')) === 'settled';
}

/** A settled picture is taken once, unless a click or a script may have set the page loading again. */
function takesOnce(capture: Capture): boolean {
  return capture.settle !== undefined && !capture.asked.clickSelector && !capture.asked.scripts;
}

function isPdf({ request }: Capture): boolean {
  return request.format === 'pdf';
}

function isPicture(capture: Capture): boolean {
  return !isPdf(capture);
}

/** A full-page picture of the whole page, not of an element or a rectangle of it. */
function scrollsFullPage(capture: Capture): boolean {
  return isPicture(capture) && capture.request.fullPage && !capture.asked.selector && !capture.asked.clip;
}

function extractAsked({ asked }: Capture): boolean {
  return Boolean(asked.extract?.length);
}

function recordsEvidence({ asked }: Capture): boolean {
  return asked.evidence === true;
}

/** A saved login with a session to apply (capture-login.ts). */
function hasSavedSession({ request }: Capture): boolean {
  return Boolean(request.login?.session);
}

/** A saved form login with no session yet, or a refused one: the capture signs in first. */
function signsInFirst({ request }: Capture): boolean {
  return Boolean(request.login?.form && request.login.signIn);
}

/** A saved form login, or an imported session: the page captured must not ask to sign in. */
function hasSignedInLogin({ request }: Capture): boolean {
  return Boolean(request.login?.form || request.login?.imported);
}

// Before navigation. `serveHtmlDocument` comes first: its Fetch pattern must be set before the
// other steps that pause requests replace it (html-document.ts). The others start together.

/** `html`: the document answers the page's first request for its address. */
async function serveHtmlDocument({ driver, request, asked }: Capture): Promise<void> {
  await serveDocument(driver, request.url, asked);
}

/** The events MainFrame and PageTraffic follow, the main frame's id, and lazy loading noted in every document. */
async function followThePage({ driver, frame, asked }: Capture): Promise<void> {
  await preparePage(driver, frame, asked.evidence === true);
}

/** `evidence`: every HTTP exchange of the page recorded from its first request, without the capture's own headers. */
async function recordExchanges(capture: Capture): Promise<void> {
  capture.exchanges = new PageExchanges(capture.driver, Object.keys(capture.asked.headers ?? {}));
}

/** `block_ads`, `block_trackers`. */
async function blockAdsAndTrackers({ driver, request, asked }: Capture): Promise<void> {
  await blockRequests(driver, request.url, asked);
}

/** `block_cookie_banners`: autoconsent in every document, to refuse consent. */
async function refuseConsentDialogs({ driver, asked }: Capture): Promise<void> {
  await prepareConsentDialogs(driver, asked);
}

/** Media emulation, time zone, locale, user agent, cookies, and the headers sent to the page's own origin (and a saved basic login's to its site). */
async function applyOptionsBeforeNavigation(capture: Capture): Promise<void> {
  const { driver, request, options, asked } = capture;
  capture.stopHeaders = await beforeNavigation(driver, request.url, options.userAgent, asked, request.login?.basic);
}

/** `omit_background`. */
async function makeBackgroundTransparent({ driver, asked }: Capture): Promise<void> {
  await omitBackground(driver, asked);
}

/** The console's errors, counted for the console_errors warning. */
async function countConsoleErrors({ console }: Capture): Promise<void> {
  await console.start();
}

/** A saved login's session: its cookies, and its localStorage in every document to come. */
async function applySavedSession({ driver, request }: Capture): Promise<void> {
  await applySession(driver, request.login!.session!);
}

/** A saved form login with no session to give: the sign-in page, filled and submitted; the session it gets is kept. */
async function signInWithSavedLogin(capture: Capture): Promise<void> {
  await signInWithForm(capture, capture.request.login!);
}

// Navigation and load.

/** DOMContentLoaded on the document the page ends on, or the failure that stopped it. */
async function navigateToPage({ driver, frame, traffic, request, options }: Capture): Promise<void> {
  await navigate(driver, frame, traffic, request.url, options.proxyServer);
}

/** A saved form login's or imported session's page after the picture: still signed in, or the session was refused (saved-login.ts). */
async function checkStillSignedIn(capture: Capture): Promise<void> {
  await checkSignedIn(capture, capture.request.login!);
}

/** Fails with the reason when the document shown is not the page asked for (the egress proxy's answer). */
async function checkDocumentIsThePage({ traffic, request }: Capture): Promise<void> {
  const failure = await traffic.mainDocumentFailure(request.url);
  if (failure) throw failure;
}

/** `fail_on_http_error`: a main document answered 4xx or 5xx fails the capture. */
async function failOnHttpError({ traffic, asked }: Capture): Promise<void> {
  const status = traffic.mainDocumentStatus;
  if (asked.failOnHttpError && status !== null && status >= 400) throw httpErrorAnswered(status);
}

/** `load`, within what is left of the navigation time-out; a page whose `load` never fires is captured as it is. */
async function waitForLoadEvent(capture: Capture): Promise<void> {
  const { frame, request, options } = capture;
  if (!(await options.tripwire.race(frame.until(() => frame.reached('load'), navigationTimeLeft(capture))))) {
    options.log?.info({ url: request.url }, `the page did not fire load within ${request.navigationTimeoutMs} ms; capturing what is there`);
  }
}

/** The requests in flight after load: all of them, or idleness for `networkidle` (a settled page's wait has its own). */
async function waitForNetwork(capture: Capture): Promise<void> {
  const { traffic, request, options, asked } = capture;
  const { url, navigationTimeoutMs } = request;
  if (waitsToSettle(capture)) return;
  if (asked.waitUntil === 'networkidle') {
    // Idle: no request in flight for NETWORK_IDLE_QUIET_MS, within what is left of the time-out.
    const idleLeft = Math.max(0, navigationTimeLeft(capture));
    if (!(await options.tripwire.race(traffic.networkIdle(idleLeft, NETWORK_IDLE_QUIET_MS)))) {
      options.log?.info({ url }, `the network was not idle within ${navigationTimeoutMs} ms; capturing what is there`);
    }
  } else {
    // Requests started before or in the load handlers are already in flight: wait for those.
    // Whatever a page starts after `load` is caught by takeScreenshot, which then takes the picture again.
    if (!(await options.tripwire.race(traffic.networkIdle(NETWORK_IDLE_MAX_MS, 0)))) {
      options.log?.debug({ url }, `requests were still in flight ${NETWORK_IDLE_MAX_MS} ms after load`);
    }
  }
}

/** Tells the caller how far the capture has come; a listener's failure is not the capture's. */
function reportProgress(progress: number): CaptureStep {
  return async ({ request }) => {
    try {
      request.onProgress?.(progress);
    } catch {
      // A progress listener's failure is not the capture's.
    }
  };
}

// Before the picture. Page work from here on runs on the page's final document (onFinalDocument):
// a page that navigates by script meanwhile (a redirect right after `load`) gets it done again
// on its new document, so the image and the HTML are of the same, final page.

/** `block_cookie_banners`: waits (a third of the capture time-out at most) for the refusal, then hides what is left. */
async function hideConsentDialogs({ driver, request, asked }: Capture): Promise<void> {
  await dismissConsentDialogs(driver, asked, request.captureTimeoutMs / 3);
}

/**
 * `wait_until: settled`: fonts loaded, the network quiet (connections open by design aside) and
 * the picture of the area to capture no longer changing, within `settle_timeout` and half of
 * what is left of the capture time-out (settle.ts). What it found goes into the verdict.
 */
async function waitForPageToSettle(capture: Capture): Promise<void> {
  const { driver, frame, traffic, request, asked, deadline } = capture;
  const capMs = Math.max(0, Math.min(asked.settleTimeoutMs ?? SETTLE_TIMEOUT_DEFAULT_MS, (deadline - Date.now()) / 2));
  capture.settle = await onFinalDocument(frame, async () => {
    const area = asked.clip ?? (asked.selector ? await selectorClip(driver, asked.selector).catch(() => null) : null);
    const { deviceScaleFactor: dpr, width, height } = request.preset;
    return waitUntilSettled(driver, traffic, { capMs, dpr, area, viewport: { width, height } });
  });
}

/** Wait for a selector, click, script, styles, delay (option-steps.ts). */
async function applyOptionsBeforePicture({ driver, frame, asked, deadline }: Capture): Promise<void> {
  await onFinalDocument(frame, () => beforeCapture(driver, asked, deadline));
}

/** Requests the page has started so far: more later mean it went on loading. */
async function countRequestsSoFar(capture: Capture): Promise<void> {
  capture.requestsSeen = capture.traffic.requestsStarted();
}

/** Content the page skips rendering until it is near the viewport (`content-visibility: auto`), rendered. */
async function renderHiddenContent({ driver, frame }: Capture): Promise<void> {
  await onFinalDocument(frame, () => evaluate(driver, renderSkippedContent, null));
}

/** A page that scrolls inside one container instead of the document, unfolded so a full page shows it all. */
async function unfoldScrollingContainer({ driver, frame }: Capture): Promise<void> {
  await onFinalDocument(frame, () => evaluate(driver, expandScrollingContainer, null));
}

// The picture.

/** The page printed to PDF (A4), with its source and facts. */
async function printToPdf(capture: Capture): Promise<void> {
  const taken = await printOnce(capture);
  capture.taken = taken;
  capture.image = { data: taken.png, ...A4_POINTS };
}

/**
 * The screenshot with the page's source and facts. A page that started more requests since its
 * network was last found idle (a timer right after `load`, a fetch chained to another) is taken
 * again once they are done (takeOnceQuiet).
 */
async function takeScreenshot(capture: Capture): Promise<void> {
  const { frame, traffic, requestsSeen } = capture;
  const take = () => screenshotOnce(capture);
  capture.taken = await onFinalDocument(frame, () => (takesOnce(capture) ? take() : takeOnceQuiet(traffic, requestsSeen, take)));
}

/** A blank picture of a page with requests in flight taken again once they are done (retakeIfBlank). */
async function retakeBlankPicture(capture: Capture): Promise<void> {
  const { frame, traffic } = capture;
  const blank = await retakeIfBlank(capture.taken!, traffic, () => onFinalDocument(frame, () => screenshotOnce(capture)), capture.deadline);
  capture.blank = blank;
  capture.taken = blank.shot;
}

/** The picture in the format and quality asked for. */
async function encodeImage(capture: Capture): Promise<void> {
  const { request } = capture;
  capture.image = await captureImage(capture.taken!.png, request.format, request.quality);
}

/** `image_width`, `image_height`. */
async function resizePicture(capture: Capture): Promise<void> {
  const { request, asked, deadline } = capture;
  capture.image = await resizeImage(capture.image!, request.format, request.quality, asked, deadline);
}

// After the picture.

/** `extract`: from the same document, before the page is closed; what fails is a warning, never the job's failure. */
async function extractFromPage(capture: Capture): Promise<void> {
  capture.extracted = await capture.options.tripwire.race(extractOutputs(capture.driver, capture.asked.extract!));
}

/** `evidence`: the exchanges recorded, once the bodies of those that loaded are read, before the page is closed. */
async function collectExchanges(capture: Capture): Promise<void> {
  capture.recorded = await capture.options.tripwire.race(capture.exchanges!.finish());
}
