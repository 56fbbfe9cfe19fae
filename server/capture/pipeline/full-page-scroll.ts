import { documentHeight, scrollThroughPage } from '../in-page/page-scripts.js';
import type { Capture } from './capture-state.js';
import { evaluate } from './page-driver.js';
import { onFinalDocument } from './page-navigation.js';
import { NETWORK_IDLE_MAX_MS, scrollTimeLimitMs } from './quiet-network.js';

/**
 * Scrolls a full page through, when it loads content on scrolling (watchLazyLoading), within
 * scrollTimeLimitMs and the request's `maxHeight`. A page that loaded something as it was
 * scrolled, or grew past where the pass turned back (a feed that fetches its next items as its
 * end comes into view), is scrolled on from there, within the same bounds, until a pass
 * loads nothing more. Notes the requests seen after each pass (`requestsSeen`).
 */
export async function scrollForLazyContent(capture: Capture): Promise<void> {
  const { driver, frame, traffic, request, options } = capture;
  const scroll = {
    maxMs: scrollTimeLimitMs(request.captureTimeoutMs),
    maxHeight: request.maxHeight,
    onlyWhenLazy: true,
    frameFallbackMs: options.frameFallbackMs ?? 0,
  };
  const until = Date.now() + scroll.maxMs;
  let pass = await onFinalDocument(frame, () => evaluate(driver, scrollThroughPage, scroll));
  while (pass.steps > 0) {
    await traffic.networkIdle(NETWORK_IDLE_MAX_MS);
    const loading = traffic.requestsStarted() > capture.requestsSeen;
    capture.requestsSeen = traffic.requestsStarted();
    const left = until - Date.now();
    if (left <= 0 || pass.reached >= request.maxHeight) break;
    // Against where the pass turned, not where it ended: items that came while it went back to
    // the top (an answer asked for before it began, a few frames late) are below that.
    const grown = (await onFinalDocument(frame, () => evaluate(driver, documentHeight, null))) > pass.reached;
    if (!grown && !loading) break;
    const more = { ...scroll, maxMs: left, onlyWhenLazy: false, from: pass.reached };
    pass = await onFinalDocument(frame, () => evaluate(driver, scrollThroughPage, more));
  }
}
