import { egressDeniedMessage, HostLookupTimeoutError, HostNotFoundError } from '../egress/policy.js';
import { CaptureError, type ImageFormat } from './engine.js';

// The texts a job's `error` field shows. Both engines use them, so a failure reads the same
// whichever browser captured the page.

export const loadTimedOut = (url: string, ms: number) => new CaptureError(`Timed out after ${seconds(ms)} s loading ${url}`);

export const captureTimedOut = (url: string, ms: number) =>
  new CaptureError(`Timed out after ${seconds(ms)} s capturing ${url}`);

export const loadFailed = (url: string, reason: string) => new CaptureError(`Could not load ${url}: ${reason}`);

export const egressBlocked = (reason: string) => new CaptureError(egressDeniedMessage(reason));

export const downloadStarted = (url: string) => loadFailed(url, 'the address starts a file download');

export const pageCrashed = (url: string) =>
  new CaptureError(`The page crashed while capturing ${url} (it may have run out of memory)`);

/** The page's renderer passed the memory limit and was stopped (PageMemoryGuard). */
export const pageOutOfMemory = (url: string, limitBytes: number) =>
  new CaptureError(`The page used more than ${Math.round(limitBytes / 2 ** 20)} MiB of memory and was stopped while capturing ${url}`);

const FORMAT_NAMES: Record<ImageFormat, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP', pdf: 'PDF' };

/** A picture with a side longer than its format takes (MAX_IMAGE_SIDE, capture-clip.ts), refused before it is encoded. */
export const pictureTooLarge = (size: { width: number; height: number }, format: ImageFormat, side: number) =>
  new CaptureError(
    `The picture is ${size.width} × ${size.height} pixels: a ${FORMAT_NAMES[format]} image is at most ${side} pixels a side; capture a smaller part, or use png`,
  );

/** The capture's time ran out before its picture was encoded or resized: that work is not started, or stopped. */
export const pictureOutOfTime = () => new CaptureError('The capture time ran out before its picture was encoded');

const CLOSED_UNANSWERED = 'the server closed the connection without answering';
const NO_ANSWER_IN_TIME = 'the server did not answer in time';
const UNREACHABLE_HOST = 'the host is unreachable';
const INVALID_RESPONSE = 'the server sent an invalid response';

/**
 * Chromium's network errors that a page's address can cause, in words. A TLS failure keeps its
 * code, which says which check failed; a code not listed here is shown as it is.
 */
const NET_ERRORS: Record<string, string> = {
  'net::ERR_CONNECTION_REFUSED': 'the connection was refused',
  'net::ERR_CONNECTION_RESET': 'the connection was reset',
  'net::ERR_CONNECTION_CLOSED': CLOSED_UNANSWERED,
  'net::ERR_EMPTY_RESPONSE': CLOSED_UNANSWERED,
  'net::ERR_CONNECTION_TIMED_OUT': NO_ANSWER_IN_TIME,
  'net::ERR_TIMED_OUT': NO_ANSWER_IN_TIME,
  'net::ERR_ADDRESS_UNREACHABLE': UNREACHABLE_HOST,
  'net::ERR_NAME_NOT_RESOLVED': 'the host name could not be resolved',
  'net::ERR_TOO_MANY_REDIRECTS': 'too many redirects',
  'net::ERR_INVALID_REDIRECT': 'the server sent an invalid redirect',
  'net::ERR_UNSAFE_PORT': 'browsers do not connect to that port',
  'net::ERR_INVALID_RESPONSE': INVALID_RESPONSE,
  'net::ERR_INVALID_HTTP_RESPONSE': INVALID_RESPONSE,
  'net::ERR_RESPONSE_HEADERS_TOO_BIG': INVALID_RESPONSE,
  // A 401 asking for credentials the browser has none for (or that it refused).
  'net::ERR_INVALID_AUTH_CREDENTIALS': 'the page asks for HTTP authentication (give it with http_auth)',
};

/** `code` is Chromium's network error, "net::ERR_…". */
export const networkFailure = (url: string, code: string) => loadFailed(url, netErrorReason(code));

function netErrorReason(code: string): string {
  if (code in NET_ERRORS) return NET_ERRORS[code];
  if (code.startsWith('net::ERR_CERT_')) return `the server's certificate is not valid (${code})`;
  if (code.startsWith('net::ERR_SSL_') || code === 'net::ERR_BAD_SSL_CLIENT_AUTH_CERT') return `the secure connection failed (${code})`;
  return code;
}

/** The egress proxy's errno codes for a target it could not reach (x-egress-unreachable), in words. */
const PROXY_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: CLOSED_UNANSWERED,
  EPIPE: CLOSED_UNANSWERED,
  ETIMEDOUT: NO_ANSWER_IN_TIME,
  EHOSTUNREACH: UNREACHABLE_HOST,
  ENETUNREACH: UNREACHABLE_HOST,
  EHOSTDOWN: UNREACHABLE_HOST,
  EPROXY: 'the upstream proxy (--proxy) would not carry the connection',
};

/**
 * The failure of a page whose document (at `documentUrl`, the address the page was redirected
 * to, if it was) the egress proxy could not reach, from the proxy's errno code. A name that
 * does not resolve fails as the job runner's own lookup does, naming the host.
 */
export function unreachableFailure(url: string, documentUrl: string, code: string): Error {
  const host = new URL(documentUrl).hostname;
  if (code === 'ENOTFOUND') return new HostNotFoundError(host);
  if (code === 'ETIMEOUT') return new HostLookupTimeoutError(host);
  // Node's HTTP parser names its errors HPE_*: the target's answer was not HTTP.
  if (code.startsWith('HPE_')) return loadFailed(url, INVALID_RESPONSE);
  return loadFailed(url, PROXY_ERRORS[code] ?? `the server could not be reached (${code})`);
}

/**
 * The CaptureError for a navigation the browser failed, from its error text (CDP's
 * `Page.navigate` errorText): a network error code such as net::ERR_CONNECTION_REFUSED, in words.
 */
export function navigationFailure(errorText: string, url: string): CaptureError {
  const code = /net::ERR_[A-Z0-9_]+/.exec(errorText)?.[0];
  if (code) return networkFailure(url, code);
  return loadFailed(url, errorText.split('\n')[0]!.slice(0, 300));
}

/** A duration as messages show it: whole seconds, or tenths below one second. */
function seconds(ms: number): string {
  return ms >= 950 ? String(Math.round(ms / 1000)) : String(Math.round(ms / 100) / 10);
}
