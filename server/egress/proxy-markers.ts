/**
 * How the egress proxy tells the browser it refused a plain-HTTP request: the 403 it writes
 * itself carries this header, whose value is the reason.
 */
export const EGRESS_DENIED_HEADER = 'x-egress-denied';

const MARKERS = new Set([EGRESS_DENIED_HEADER]);

/**
 * True for the headers only the proxy may write. The proxy removes them from every answer it
 * relays, so an allowed page cannot fake a denial by sending one.
 */
export function isProxyMarker(headerName: string): boolean {
  return MARKERS.has(headerName.toLowerCase());
}

/**
 * The proxy's reason when it refused the request of a response the browser received for `url`,
 * from the response's headers (names in lower case); null when the response is the target's own.
 * Only an `http:` response can carry one: the proxy answers those itself and strips the marker
 * from the target's answers. An `https:` response arrives through a CONNECT tunnel the proxy
 * cannot read or write, so a marker in it came from the page and is ignored; the proxy refuses
 * a tunnel before it opens (ERR_TUNNEL_CONNECTION_FAILED) instead.
 */
export function egressDenial(url: string, headers: Record<string, string>): string | null {
  if (!url.toLowerCase().startsWith('http:')) return null;
  const reason = headers[EGRESS_DENIED_HEADER];
  return reason === undefined ? null : reason.trim() || 'denied';
}
