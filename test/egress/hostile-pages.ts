import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Pages that try to reach `?to=<origin>` in one way each, served from 127.0.0.1. Each page also
 * loads `/hold?ms=<hold>` (default 300), an image answered that late, so the load event and the
 * capture wait while the page makes its try.
 */
export interface HostilePages {
  origin: string;
  port: number;
  /** Paths requested so far. */
  paths: string[];
  close(): Promise<void>;
}

/** The page for each way of reaching the target; `to` is the target origin (http://host:port). */
function pageFor(name: string, to: string, holdMs: number): string | null {
  // A slow image keeps the load event, and so the capture, waiting while the page makes its try.
  const hold = `<img src="/hold?ms=${holdMs}" width="1" height="1" alt="">`;
  const html = (body: string) =>
    `<!doctype html><html><head><meta charset="utf-8"><title>hostile</title></head><body>${body}${hold}</body></html>`;
  const script = (code: string) => html(`<script>${code}</script>`);
  const ws = to.replace(/^http/, 'ws');
  const q = encodeURIComponent(to);
  switch (name) {
    case '/meta-refresh':
      return html(`<meta http-equiv="refresh" content="0;url=${to}/meta-refresh-target">`);
    case '/js-redirect':
      return script(`location.href = ${JSON.stringify(`${to}/js-redirect-target`)};`);
    case '/img':
      return html(`<img src="${to}/img-target.png" alt="">`);
    case '/iframe':
      return html(`<iframe src="${to}/iframe-target"></iframe>`);
    case '/fetch':
      return script(`fetch(${JSON.stringify(`${to}/fetch-target`)}, { mode: 'no-cors' }).catch(() => {});`);
    case '/websocket':
      return script(`new WebSocket(${JSON.stringify(`${ws}/websocket-target`)});`);
    case '/worker':
      return script(`new Worker('/worker.js?to=${q}');`);
    case '/worker.js':
      // A script, not a page: no hold image.
      return (
        `fetch(${JSON.stringify(`${to}/worker-fetch-target`)}, { mode: 'no-cors' }).catch(() => {});` +
        `new WebSocket(${JSON.stringify(`${ws}/worker-websocket-target`)});`
      );
    case '/webrtc':
      // STUN is UDP; without the WebRTC switch it would go straight to the target, past any proxy.
      return script(
        `const pc = new RTCPeerConnection({ iceServers: [{ urls: ${JSON.stringify(`stun:${new URL(to).host}`)} },` +
          ` { urls: ${JSON.stringify(`turn:${new URL(to).host}?transport=udp`)}, username: 'u', credential: 'p' }] });` +
          `pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o));`,
      );
    case '/rebind':
      // Same origin, asked again once the name has moved to another address.
      return script(`setTimeout(() => fetch('/rebind-again').catch(() => {}), 100);`);
    default:
      return null;
  }
}

/** Starts the hostile pages on 127.0.0.1 (port 0 picks a free one). */
export async function startHostilePages(port = 0): Promise<HostilePages> {
  const paths: string[] = [];
  const holds = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hostile');
    paths.push(url.pathname);
    if (url.pathname === '/hold') {
      const timer = setTimeout(() => {
        holds.delete(timer);
        res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' });
        res.end(Buffer.from('R0lGODlhAQABAAAAACwAAAAAAQABAAA=', 'base64'));
      }, Number(url.searchParams.get('ms') ?? 0));
      holds.add(timer);
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: `${url.searchParams.get('to')}/redirect-target`, 'cache-control': 'no-store' });
      return res.end();
    }
    const body = pageFor(url.pathname, url.searchParams.get('to') ?? '', Number(url.searchParams.get('hold') ?? 300));
    const type = url.pathname.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8';
    res.writeHead(body === null ? 404 : 200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body ?? 'not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${actual}`,
    port: actual,
    paths,
    close: async () => {
      for (const timer of holds) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
