import { isAllowed, normalizeAddress } from '../ip-whitelist.js';

/**
 * The address a request comes from: the socket's peer, or — only when that peer is a
 * trusted proxy — the nearest untrusted hop of X-Forwarded-For. Trusting the header from
 * anyone would let a caller pick its own address and walk past the IP whitelist.
 */
export function clientAddress(socketAddress: string | undefined, forwardedFor: string | undefined, trustProxy: readonly string[]): string {
  const peer = normalizeAddress(socketAddress ?? '');
  if (trustProxy.length === 0 || !forwardedFor || !isAllowed(trustProxy, peer)) return peer;
  const hops = forwardedFor
    .split(',')
    .map((h) => normalizeAddress(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!isAllowed(trustProxy, hops[i])) return hops[i];
  }
  return hops[0] ?? peer;
}
