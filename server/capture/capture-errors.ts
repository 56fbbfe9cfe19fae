// The errors a capture fails with, as the job service tells them apart (engine.ts names them too).

/** A capture that failed because of the page (time-out, DNS, HTTP error page is NOT one). */
export class CaptureError extends Error {
  override readonly name = 'CaptureError';
}

/** The browser crashed or disconnected during the capture; the job may be retried once. */
export class BrowserCrashedError extends Error {
  override readonly name: string = 'BrowserCrashedError';
}

/**
 * The page's renderer process died while the browser stayed up: killed from outside (the OOM
 * killer, an operator's `kill`) or crashed. Nothing shows the page caused it, so it is retried
 * like a browser crash. A renderer the engine's own memory guard stopped is not this, but a
 * CaptureError saying so: that page would only grow past the limit again.
 */
export class PageCrashedError extends BrowserCrashedError {
  override readonly name: string = 'PageCrashedError';
  constructor(readonly url: string) {
    super(`The page crashed while capturing ${url}`);
  }
}
