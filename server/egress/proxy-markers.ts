/**
 * How the egress proxy tells the browser what became of a plain-HTTP request: the answer it
 * writes itself carries one of these headers. A refusal is a 403 whose `x-egress-denied` header
 * holds the reason; a target it could not reach is a 502 whose `x-egress-unreachable` header
 * holds the errno code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT…).
 */
export const EGRESS_DENIED_HEADER = 'x-egress-denied';
export const EGRESS_UNREACHABLE_HEADER = 'x-egress-unreachable';

const MARKERS = new Set([EGRESS_DENIED_HEADER, EGRESS_UNREACHABLE_HEADER]);

/**
 * True for the headers only the proxy may write. The proxy removes them from every answer it
 * relays, so an allowed page cannot fake a denial (or an unreachable target) by sending one.
 */
export function isProxyMarker(headerName: string): boolean {
  return MARKERS.has(headerName.toLowerCase());
}

/**
 * The proxy's reason when it refused the request of a response the browser received for `url`,
 * from the response's headers (names in lower case); null when the response is the target's own.
 */
export function egressDenial(url: string, headers: Record<string, string>): string | null {
  const reason = marker(url, headers, EGRESS_DENIED_HEADER);
  return reason === null ? null : reason || 'denied';
}

/** The errno code when the proxy answered for a target it could not reach, else null. */
export function egressUnreachable(url: string, headers: Record<string, string>): string | null {
  const code = marker(url, headers, EGRESS_UNREACHABLE_HEADER);
  return code === null ? null : code || 'EIO';
}

/**
 * Only an `http:` response can carry a marker: the proxy answers those itself and strips the
 * markers from the target's answers. An `https:` response arrives through a CONNECT tunnel the
 * proxy cannot read or write, so a marker in it came from the page and is ignored; the proxy
 * refuses a tunnel before it opens (ERR_TUNNEL_CONNECTION_FAILED) instead.
 */
function marker(url: string, headers: Record<string, string>, name: string): string | null {
  if (!url.toLowerCase().startsWith('http:')) return null;
  const value = headers[name];
  return value === undefined ? null : value.trim();
}

/**
 * What Chromium reports when the egress proxy refuses a CONNECT tunnel (https, wss): the proxy's
 * answer and its header never reach the page. A refused plain-HTTP request carries a header
 * instead (egressDenial).
 */
export const TUNNEL_REFUSED_ERROR = 'net::ERR_TUNNEL_CONNECTION_FAILED';

/** The reason given for a refused tunnel, where no header can carry one. */
export const TUNNEL_REFUSED_REASON = 'the egress proxy refused the connection';

/** True when a failed request's error text is the proxy refusing a tunnel. */
export function isTunnelRefusal(errorText: string | undefined): boolean {
  return !!errorText && errorText.includes(TUNNEL_REFUSED_ERROR);
}
