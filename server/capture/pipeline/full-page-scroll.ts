import { documentHeight, scrollThroughPage } from '../in-page/page-scripts.js';
import type { Capture } from './capture-state.js';
import { evaluate } from './page-driver.js';
import { onFinalDocument } from './page-navigation.js';
import { NETWORK_IDLE_MAX_MS, scrollTimeLimitMs } from './quiet-network.js';

/**
 * Scrolls a full page through, when it loads content on scrolling (watchLazyLoading), within
 * scrollTimeLimitMs and the request's `maxHeight`. A page that loaded something as it was
 * scrolled, or grew once its requests were done (a feed that fetches its next items as its end
 * comes into view), is scrolled on from where it ended, within the same bounds, until a pass
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
  let steps = await onFinalDocument(frame, () => evaluate(driver, scrollThroughPage, scroll));
  while (steps > 0) {
    const height = await onFinalDocument(frame, () => evaluate(driver, documentHeight, null));
    await traffic.networkIdle(NETWORK_IDLE_MAX_MS);
    const loading = traffic.requestsStarted() > capture.requestsSeen;
    capture.requestsSeen = traffic.requestsStarted();
    const left = until - Date.now();
    if (left <= 0 || height >= request.maxHeight) break;
    const grown = (await onFinalDocument(frame, () => evaluate(driver, documentHeight, null))) > height;
    if (!grown && !loading) break;
    const more = { ...scroll, maxMs: left, onlyWhenLazy: false, from: height };
    steps = await onFinalDocument(frame, () => evaluate(driver, scrollThroughPage, more));
  }
}
