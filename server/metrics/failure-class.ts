import { BrowserCrashedError, CaptureError, PageCrashedError } from '../capture/engine.js';
import { EgressDeniedError, HostLookupTimeoutError, HostNotFoundError } from '../egress/policy.js';

/** What a failed job's `failure_class` label says; a short, fixed list so the series stay few. */
export type FailureClass = 'page' | 'timeout' | 'egress_denied' | 'dns' | 'page_crashed' | 'browser_crashed' | 'storage' | 'internal';

export const FAILURE_CLASSES: readonly FailureClass[] = [
  'page',
  'timeout',
  'egress_denied',
  'dns',
  'page_crashed',
  'browser_crashed',
  'storage',
  'internal',
];

/**
 * Sorts a capture failure by its class (or system error code), as describeFailure does for its
 * message: the page's own failure (`page`: unreachable, refused, over its memory), the job's
 * last-resort deadline (`timeout`), the egress policy, name resolution, a renderer or browser
 * that died on both tries, the data directory, or a fault of the service.
 */
export function failureClass(err: unknown, signal: AbortSignal): FailureClass {
  if (signal.aborted && signal.reason instanceof CaptureError) return 'timeout';
  if (err instanceof EgressDeniedError) return 'egress_denied';
  if (err instanceof HostNotFoundError || err instanceof HostLookupTimeoutError) return 'dns';
  if (err instanceof PageCrashedError) return 'page_crashed';
  if (err instanceof BrowserCrashedError) return 'browser_crashed';
  if (err instanceof CaptureError) return 'page';
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EACCES' || code === 'EROFS' || code === 'EIO') return 'storage';
  return 'internal';
}
