/**
 * How the egress proxy tells the browser it refused a connection. A plain-HTTP request it
 * refuses gets a response carrying this header, whose value is the reason.
 */
export const EGRESS_DENIED_HEADER = 'x-egress-denied';

/**
 * What Chromium reports when the proxy refuses a CONNECT tunnel (https, wss): the proxy's
 * answer and its header never reach the page.
 */
export const TUNNEL_REFUSED_ERROR = 'net::ERR_TUNNEL_CONNECTION_FAILED';

/** The reason given for a refused tunnel, where no header can carry one. */
export const TUNNEL_REFUSED_REASON = 'the egress proxy refused the connection';

/** The egress proxy's reason when `headers` (lower-case names) mark a refusal, else null. */
export function egressDenial(headers: Record<string, string>): string | null {
  const reason = headers[EGRESS_DENIED_HEADER];
  return reason === undefined ? null : reason.trim() || 'denied';
}

/** True when a failed request's error text is the proxy refusing a tunnel. */
export function isTunnelRefusal(errorText: string | undefined): boolean {
  return !!errorText && errorText.includes(TUNNEL_REFUSED_ERROR);
}
