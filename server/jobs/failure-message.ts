import { BrowserCrashedError, CaptureError } from '../capture/engine.js';

/** The job's `error` text: the capture's own message, or a plain one that leaks no internals. */
export function failureMessage(err: unknown, signal: AbortSignal): string {
  if (signal.aborted && signal.reason instanceof CaptureError) return signal.reason.message;
  if (err instanceof CaptureError) return err.message;
  const name = (err as Error)?.name;
  if (name === 'EgressDeniedError') return (err as Error).message;
  if (err instanceof BrowserCrashedError) return 'The browser crashed while capturing the page (tried twice)';
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC') return 'Could not store the screenshot: the disk is full';
  if (code === 'EACCES' || code === 'EROFS' || code === 'EIO') return 'Could not store the screenshot: the data directory is not writable';
  return 'The capture failed unexpectedly';
}
