import { BrowserCrashedError, CaptureError, PageCrashedError } from '../capture/engine.js';
import { EgressDeniedError, HostLookupTimeoutError, HostNotFoundError } from '../egress/policy.js';
import { StoreUnavailableError } from '../store/stores.js';

/**
 * Failures a user's request can cause, whose messages say what happened in words safe to show:
 * the page (CaptureError), the egress policy, a host name that does not resolve.
 */
const SAYS_WHAT_HAPPENED = [CaptureError, EgressDeniedError, HostNotFoundError, HostLookupTimeoutError];

/** How a job failed, as the job shows it and as the log needs it. */
export interface JobFailure {
  /** The job's `error` text: the capture's own message, or a plain one that leaks no internals. */
  message: string;
  /**
   * The service's own fault (the disk, a bug) rather than the page's or the browser's: worth
   * an error line with the stack, where a page that fails is only the job's business.
   */
  internal: boolean;
}

/** Tells a failure by its class (or its system error code), never by its message. */
export function describeFailure(err: unknown, signal: AbortSignal): JobFailure {
  const shown = (message: string): JobFailure => ({ message, internal: false });
  if (signal.aborted && signal.reason instanceof CaptureError) return shown(signal.reason.message);
  if (SAYS_WHAT_HAPPENED.some((kind) => err instanceof kind)) return shown((err as Error).message);
  // Both are retried once (JobRunner), so a job failing with one has crashed twice.
  if (err instanceof PageCrashedError) return shown(`The page crashed while capturing ${err.url} (tried twice)`);
  if (err instanceof BrowserCrashedError) return shown('The browser crashed while capturing the page (tried twice)');
  if (err instanceof StoreUnavailableError) return { message: 'Could not store the screenshot: the database did not answer', internal: true };
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC') return { message: 'Could not store the screenshot: the disk is full', internal: true };
  if (code === 'EACCES' || code === 'EROFS' || code === 'EIO') {
    return { message: 'Could not store the screenshot: the data directory is not writable', internal: true };
  }
  return { message: 'The capture failed unexpectedly', internal: true };
}
