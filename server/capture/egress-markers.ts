/**
 * What Chromium reports when the egress proxy refuses a CONNECT tunnel (https, wss): the proxy's
 * answer and its header never reach the page. A refused plain-HTTP request carries a header
 * instead (egressDenial in server/egress/proxy-markers.ts).
 */
export const TUNNEL_REFUSED_ERROR = 'net::ERR_TUNNEL_CONNECTION_FAILED';

/** The reason given for a refused tunnel, where no header can carry one. */
export const TUNNEL_REFUSED_REASON = 'the egress proxy refused the connection';

/** True when a failed request's error text is the proxy refusing a tunnel. */
export function isTunnelRefusal(errorText: string | undefined): boolean {
  return !!errorText && errorText.includes(TUNNEL_REFUSED_ERROR);
}
