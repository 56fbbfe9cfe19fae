import { isTunnelRefusal } from '../../egress/proxy-markers.js';
import { downloadStarted, navigationFailure } from '../capture-failures.js';
import { watchLazyLoading } from '../in-page/page-scripts.js';
import { watchDocumentChanges } from '../in-page/settle-signals.js';
import type { MainFrame } from './main-frame.js';
import { listen, type PageDriver } from './page-driver.js';
import { EXCHANGE_BOUNDS } from './page-exchanges.js';
import type { PageTraffic } from './page-traffic.js';
import { tunnelFailure } from './tunnel-failure.js';

/** Time a page that navigated again by script gets to load its new document. */
const SETTLE_AFTER_NAVIGATION_MS = 5_000;

/** Response bodies are asked for only by an evidence capture; without buffers the renderer does not copy each one for the session. */
const NO_BODY_BUFFERS = { maxTotalBufferSize: 0, maxResourceBufferSize: 0 };
/** An evidence capture's: the bodies PageExchanges reads, within its bounds. */
const EVIDENCE_BODY_BUFFERS = { maxTotalBufferSize: EXCHANGE_BOUNDS.maxTotalBodyBytes, maxResourceBufferSize: EXCHANGE_BOUNDS.maxBodyBytes };
const LAZY_LOADING_WATCH = `(${watchLazyLoading.toString()})();(${watchDocumentChanges.toString()})()`;

/**
 * Turns on the events MainFrame and PageTraffic follow, learns the main frame's id, and has
 * every document to come note lazy loading (watchLazyLoading, which decides whether a full page
 * is scrolled) and its changes (watchDocumentChanges, for the wait for a settled page); with
 * `keepBodies`, the session keeps response bodies for PageExchanges. The commands go together, so
 * they cost one round trip's wait.
 */
export async function preparePage(driver: PageDriver, frame: MainFrame, keepBodies = false): Promise<void> {
  const [, , , { frameTree }] = await Promise.all([
    driver.send('Page.enable'),
    driver.send('Network.enable', keepBodies ? EVIDENCE_BODY_BUFFERS : NO_BODY_BUFFERS),
    driver.send('Page.addScriptToEvaluateOnNewDocument', { source: LAZY_LOADING_WATCH }),
    driver.send('Page.getFrameTree'),
  ]);
  frame.id = frameTree.frame.id;
}

/**
 * Navigates the page's main frame to `url` and resolves once the document it ends on (after
 * redirects, and a script or meta refresh that moved it on before it was ready) has fired
 * DOMContentLoaded: the bar for failing, since a page whose `load` never fires (one stalled
 * image) is still captured. Throws a CaptureError when the browser could not load the address.
 * It does not time out itself; the caller bounds it.
 */
export async function navigate(
  driver: PageDriver,
  frame: MainFrame,
  traffic: PageTraffic,
  url: string,
  proxyServer: string | undefined,
): Promise<void> {
  const before = frame.navigations;
  let download = false;
  const stopListening = listen(driver, { 'Page.downloadWillBegin': () => (download = true) });
  let answer;
  try {
    answer = await driver.send('Page.navigate', { url });
  } finally {
    stopListening();
  }
  if (answer.isDownload || download) throw downloadStarted(url);
  const { errorText } = answer;
  if (errorText) {
    // A refused tunnel: the proxy says why. The failed request names the document's address
    // (one the page was redirected to, maybe); without it, the address asked for.
    if (isTunnelRefusal(errorText)) throw (await traffic.mainDocumentFailure(url)) ?? (await tunnelFailure(proxyServer, url, url));
    throw navigationFailure(errorText, url);
  }
  await frame.until(() => frame.navigations > before && frame.reached('domcontentloaded'));
}

/** What CDP answers when the document went away under a call. */
const NAVIGATED_AWAY =
  /Execution context was destroyed|Inspected target navigated or closed|Cannot find default execution context|Not attached to an active page|navigated during/i;
/** Times work is redone for a page that keeps navigating; the last result stands. */
const NAVIGATION_RETRIES = 2;

/**
 * Runs page work until it completes on one document: when the main frame navigated while it
 * ran (it failed, or the document changed under it), waits for the new document to load and
 * runs it again, a bounded number of times. Any failure counts once the frame has committed
 * another document: a script evaluated just after the commit runs in the new, empty document,
 * whose measurements (a height of 0) fail the screenshot in words of their own.
 */
export async function onFinalDocument<R>(frame: MainFrame, work: () => Promise<R>): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    const navigations = frame.navigations;
    try {
      const result = await work();
      if (frame.navigations === navigations || attempt >= NAVIGATION_RETRIES) return result;
    } catch (err) {
      const navigated = frame.navigations !== navigations || NAVIGATED_AWAY.test(String(err));
      if (!navigated || attempt >= NAVIGATION_RETRIES) throw err;
    }
    // The navigation may have started but not committed yet; then the new document loads.
    const settled = Date.now() + SETTLE_AFTER_NAVIGATION_MS;
    await frame.until(() => frame.navigations !== navigations, SETTLE_AFTER_NAVIGATION_MS);
    await frame.until(() => frame.reached('load'), settled - Date.now());
  }
}
