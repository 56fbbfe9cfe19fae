// How long the capture pipeline waits for a page (its network, scrolling it for lazy content),
// and taking the picture again when the page went on loading while it was being taken.

/** The longest a capture waits, each time, for a page's network to go quiet. */
export const NETWORK_IDLE_MAX_MS = 1_500;

/** Scrolling a full page for lazy content stops after 5 s, and after a third of the capture's time. */
export function scrollTimeLimitMs(captureTimeoutMs: number): number {
  return Math.min(5_000, captureTimeoutMs / 3);
}

/** What the pipeline knows of a page's requests (PageTraffic). */
export interface PageNetwork {
  /** Requests the page has started so far. */
  requestsStarted(): number;
  /** Resolves once no request has been in flight for a quiet period (true), or after `maxMs` (false). */
  networkIdle(maxMs: number): Promise<boolean>;
}

/**
 * Runs `take` (a screenshot and the page source) and returns its result if the page started no
 * request since `seen` (its request count when its network was last found idle). A page that did
 * is not done loading: its network is waited for and `take` runs again — only until
 * NETWORK_IDLE_MAX_MS after the first run began, so a page that polls gets a few more runs, not an
 * endless series.
 */
export async function takeOnceQuiet<T>(network: PageNetwork, seen: number, take: () => Promise<T>): Promise<T> {
  const until = Date.now() + NETWORK_IDLE_MAX_MS;
  for (;;) {
    const result = await take();
    const now = network.requestsStarted();
    if (now === seen || Date.now() >= until) return result;
    seen = now;
    await network.networkIdle(until - Date.now());
  }
}
