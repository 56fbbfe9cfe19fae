import { TUNNEL_REFUSED_REASON } from '../../egress/proxy-markers.js';
import { askTunnelRefusal } from '../../egress/tunnel-refusals.js';
import { egressBlocked, unreachableFailure } from '../capture-failures.js';

/**
 * The failure of the page at `url` whose document, at `tunnelUrl` (the address itself or one it
 * redirected to), came through a tunnel the egress proxy refused: as the proxy explains it when
 * asked, a denial with its reason or a target it could not reach; without an answer, a denial.
 */
export async function tunnelFailure(proxyServer: string | undefined, url: string, tunnelUrl: string): Promise<Error> {
  const verdict = proxyServer ? await askTunnelRefusal(proxyServer, tunnelUrl) : null;
  if (verdict && 'unreachable' in verdict) return unreachableFailure(url, tunnelUrl, verdict.unreachable);
  return egressBlocked(verdict?.denied ?? TUNNEL_REFUSED_REASON);
}
