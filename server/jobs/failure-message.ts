import { BrowserCrashedError, CaptureError, PageCrashedError } from '../capture/engine.js';
import { EgressDeniedError, HostLookupTimeoutError, HostNotFoundError } from '../egress/policy.js';

/**
 * Failures a user's request can cause, whose messages say what happened in words safe to show:
 * the page (CaptureError), the egress policy, a host name that does not resolve.
 */
const SAYS_WHAT_HAPPENED = [CaptureError, EgressDeniedError, HostNotFoundError, HostLookupTimeoutError];

/** The job's `error` text: the capture's own message, or a plain one that leaks no internals. */
export function failureMessage(err: unknown, signal: AbortSignal): string {
  if (signal.aborted && signal.reason instanceof CaptureError) return signal.reason.message;
  if (SAYS_WHAT_HAPPENED.some((kind) => err instanceof kind)) return (err as Error).message;
  // Both are retried once (JobService), so a job failing with one has crashed twice.
  if (err instanceof PageCrashedError) return `The page crashed while capturing ${err.url} (tried twice)`;
  if (err instanceof BrowserCrashedError) return 'The browser crashed while capturing the page (tried twice)';
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC') return 'Could not store the screenshot: the disk is full';
  if (code === 'EACCES' || code === 'EROFS' || code === 'EIO') return 'Could not store the screenshot: the data directory is not writable';
  return 'The capture failed unexpectedly';
}
