import { seconds } from './deadline.js';
import { CaptureError } from './engine.js';
import { TUNNEL_REFUSED_REASON, isTunnelRefusal } from './egress-markers.js';

// The texts a job's `error` field shows. Both engines use them, so a failure reads the same
// whichever browser captured the page.

export const loadTimedOut = (url: string, ms: number) => new CaptureError(`Timed out after ${seconds(ms)} s loading ${url}`);

export const captureTimedOut = (url: string, ms: number) =>
  new CaptureError(`Timed out after ${seconds(ms)} s capturing ${url}`);

export const loadFailed = (url: string, reason: string) => new CaptureError(`Could not load ${url}: ${reason}`);

export const egressBlocked = (reason: string) => new CaptureError(`blocked by egress policy: ${reason}`);

export const pageCrashed = (url: string) =>
  new CaptureError(`The page crashed while capturing ${url} (it may have run out of memory)`);

/** The page's renderer passed the memory limit and was stopped (PageMemoryGuard). */
export const pageOutOfMemory = (url: string, limitBytes: number) =>
  new CaptureError(`The page used more than ${Math.round(limitBytes / 2 ** 20)} MiB of memory and was stopped while capturing ${url}`);

/**
 * The CaptureError for a failed navigation, from the browser's error: a time-out, a network
 * error code such as net::ERR_CONNECTION_REFUSED, or the egress proxy refusing a tunnel.
 */
export function navigationFailure(err: unknown, url: string, timeoutMs: number): CaptureError {
  const message = String((err as Error)?.message ?? err);
  if ((err as Error)?.name === 'TimeoutError') return loadTimedOut(url, timeoutMs);
  if (isTunnelRefusal(message)) return egressBlocked(TUNNEL_REFUSED_REASON);
  if (/Download is starting/i.test(message)) return loadFailed(url, 'the address starts a file download');
  const code = /net::ERR_[A-Z0-9_]+/.exec(message)?.[0];
  if (code) return loadFailed(url, code);
  // Keep only the browser's first line: later ones are driver call logs.
  return loadFailed(url, message.split('\n')[0]!.replace(/^page\.goto:\s*/, '').slice(0, 300));
}
