import http from 'node:http';

import { egressDenial, egressUnreachable, isProxyMarker } from './proxy-markers.js';

/** Where the egress proxy answers, to requests in origin form, why it refused a tunnel. */
export const TUNNEL_REFUSAL_PATH = '/tunnel-refusal';

/** How long a refusal is remembered; engines ask within a moment of the failure. */
const KEEP_MS = 60_000;
const MAX_KEPT = 1_000;
const ASK_TIMEOUT_MS = 2_000;

/**
 * The CONNECT tunnels the egress proxy refused lately, by "host:port", each with the marker
 * headers a refused plain-HTTP request would have carried. Chromium reports every refused
 * tunnel alike (ERR_TUNNEL_CONNECTION_FAILED) and shows nobody the proxy's answer, so an engine
 * whose page failed so asks the proxy (askTunnelRefusal) whether it was a denial, and why, or a
 * target it could not reach. Jobs capturing the same host at the same moment share the answer,
 * which for one target and one moment is the same.
 */
export class TunnelRefusals {
  private readonly kept = new Map<string, { markers: Record<string, string>; at: number }>();

  /** Remembers a refusal of `authority` from the headers of the proxy's answer. */
  note(authority: string, headers: Record<string, string>): void {
    const markers = Object.fromEntries(Object.entries(headers).filter(([name]) => isProxyMarker(name)));
    if (Object.keys(markers).length === 0) return;
    this.kept.delete(authority);
    this.kept.set(authority, { markers, at: Date.now() });
    // A Map iterates in insertion order: the first entries are the oldest.
    for (const [key, entry] of this.kept) {
      if (this.kept.size <= MAX_KEPT && Date.now() - entry.at < KEEP_MS) break;
      this.kept.delete(key);
    }
  }

  /** The markers of the last refusal of `authority` in the last minute, or null. */
  markers(authority: string): Record<string, string> | null {
    const entry = this.kept.get(authority);
    return entry && Date.now() - entry.at < KEEP_MS ? entry.markers : null;
  }

  /**
   * Answers a query in origin form (`GET /tunnel-refusal?authority=host:port`): 204 with the
   * markers of the refusal, or 404. Only processes on this machine can ask: the proxy listens on
   * 127.0.0.1, and a page's requests reach it in absolute form, where its own port is denied.
   */
  answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const authority = new URL(req.url ?? '/', 'http://proxy').searchParams.get('authority') ?? '';
    const markers = req.method === 'GET' ? this.markers(authority) : null;
    res.writeHead(markers ? 204 : 404, { ...markers, 'cache-control': 'no-store' });
    res.end();
  }
}

/** "host:port" of the CONNECT tunnel Chromium opens for `url`, as the proxy reads it. */
export function tunnelAuthority(url: string): string {
  const target = new URL(url);
  const port = target.port || (target.protocol === 'http:' || target.protocol === 'ws:' ? '80' : '443');
  return `${target.hostname}:${port}`;
}

/**
 * Asks the egress proxy at `proxyUrl` why it refused the tunnel for `url`: a denial and its
 * reason, a target it could not reach and the errno code, or null when it cannot tell (it does
 * not remember one, or does not answer such questions).
 */
export function askTunnelRefusal(proxyUrl: string, url: string): Promise<{ denied: string } | { unreachable: string } | null> {
  const query = `${proxyUrl}${TUNNEL_REFUSAL_PATH}?authority=${encodeURIComponent(tunnelAuthority(url))}`;
  return new Promise((resolve) => {
    const req = http.get(query, { timeout: ASK_TIMEOUT_MS, agent: false }, (res) => {
      res.resume();
      const headers = res.headers as Record<string, string>;
      const denied = res.statusCode === 204 ? egressDenial(query, headers) : null;
      const unreachable = res.statusCode === 204 ? egressUnreachable(query, headers) : null;
      resolve(denied !== null ? { denied } : unreachable !== null ? { unreachable } : null);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}
