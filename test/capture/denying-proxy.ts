import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DenyingProxy {
  /** e.g. "http://127.0.0.1:41235" */
  url: string;
  /** Absolute URLs of the requests it forwarded or refused, and `CONNECT host:port` lines. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * A forward proxy on 127.0.0.1 that speaks the egress marker protocol the way the egress guard
 * does: plain-HTTP requests whose path starts with one of `deniedPrefixes` get a 403 carrying
 * `x-egress-denied: <reason>`, every CONNECT tunnel is refused, and everything else is
 * forwarded — only to 127.0.0.1, so a test can never reach another address through it.
 */
export async function startDenyingProxy(deniedPrefixes: string[], reason = 'test policy'): Promise<DenyingProxy> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    // A question in origin form (an engine asking why a tunnel was refused): it cannot tell.
    if (!req.url?.startsWith('http://')) return void res.writeHead(404).end();
    const target = new URL(req.url);
    seen.push(target.href);
    const deny = (why: string) => {
      res.writeHead(403, { 'content-type': 'text/plain', 'x-egress-denied': why });
      res.end(`refused: ${why}`);
    };
    if (target.hostname !== '127.0.0.1') return deny('not loopback');
    if (deniedPrefixes.some((prefix) => target.pathname.startsWith(prefix))) return deny(reason);
    const upstream = http.request(
      { host: '127.0.0.1', port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers, timeout: 10_000 },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, socket) => {
    seen.push(`CONNECT ${req.url}`);
    socket.end(`HTTP/1.1 403 Forbidden\r\nx-egress-denied: ${reason}\r\ncontent-length: 0\r\n\r\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
