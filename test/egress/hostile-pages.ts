import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Pages that try to reach `?to=<origin>` in one way each, served from 127.0.0.1. Each page also
 * loads `/hold`, an image answered only once the test says the page's try has shown up
 * (holdUntil), so the load event and the capture wait for the try however late it comes; with
 * `?hold=<ms>` the image is answered that late instead, for a try nobody can see.
 */
export interface HostilePages {
  origin: string;
  port: number;
  /** Paths requested so far. */
  paths: string[];
  /**
   * Answers each `/hold` once `tried()` is true, checked every 20 ms; after HOLD_MAX_MS anyway,
   * so a try that never comes shows as a failed check, not as a capture's time-out.
   */
  holdUntil(tried: () => boolean): void;
  close(): Promise<void>;
}

/** The longest a page's `/hold` waits for its try: short of the tests' 10 s navigation time-out. */
export const HOLD_MAX_MS = 8_000;

/** How many tries each page makes (one unless said here): a worker fetches and opens a socket. */
export const TRIES: Readonly<Record<string, number>> = { '/worker': 2 };

/**
 * The page for each way of reaching the target; `to` is the target origin (http://host:port),
 * `holdMs` a fixed time for its `/hold`, or null for until its try has shown up; `self` is this
 * server's own origin by address.
 */
function pageFor(name: string, to: string, holdMs: number | null, self: string): string | null {
  const src = `/hold${holdMs === null ? '' : `?ms=${holdMs}`}`;
  // A held image keeps the load event, and so the capture, waiting while the page makes its try.
  const holdingImage = `<img src="${src}" width="1" height="1" alt="">`;
  const html = (body: string, hold = holdingImage) =>
    `<!doctype html><html><head><meta charset="utf-8"><title>hostile</title></head><body>${body}${hold}</body></html>`;
  const script = (code: string) => html(`<script>${code}</script>`);
  const ws = to.replace(/^http/, 'ws');
  const q = encodeURIComponent(to);
  switch (name) {
    case '/meta-refresh':
      // A refresh waits for the load event, which a held image would keep back until HOLD_MAX_MS.
      // A held fetch leaves the load alone, and the capture waits after load for the requests in
      // flight (up to 1.5 s, NETWORK_IDLE_MAX_MS), so for the refresh too.
      return html(`<meta http-equiv="refresh" content="0;url=${to}/meta-refresh-target">`, `<script>fetch(${JSON.stringify(src)})</script>`);
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
      // Same origin, asked again once the name has moved to another address. Its own name no
      // longer leads here by then, so the held image is asked of this server by its address.
      return html(`<script>setTimeout(() => fetch('/rebind-again').catch(() => {}), 100);</script>`, holdingImage.replace(src, self + src));
    default:
      return null;
  }
}

/** Starts the hostile pages on 127.0.0.1 (port 0 picks a free one). */
export async function startHostilePages(port = 0): Promise<HostilePages> {
  const paths: string[] = [];
  const holds = new Set<NodeJS.Timeout>();
  let tried: () => boolean = () => true;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hostile');
    paths.push(url.pathname);
    if (url.pathname === '/hold') {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' });
        res.end(Buffer.from('R0lGODlhAQABAAAAACwAAAAAAQABAAA=', 'base64'));
      };
      const ms = url.searchParams.get('ms');
      if (ms !== null) {
        const timer = setTimeout(() => {
          holds.delete(timer);
          answer();
        }, Number(ms));
        holds.add(timer);
        return;
      }
      const until = Date.now() + HOLD_MAX_MS;
      const timer = setInterval(() => {
        if (!tried() && Date.now() < until) return;
        clearInterval(timer);
        holds.delete(timer);
        answer();
      }, 20);
      holds.add(timer);
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: `${url.searchParams.get('to')}/redirect-target`, 'cache-control': 'no-store' });
      return res.end();
    }
    const hold = url.searchParams.get('hold');
    const body = pageFor(url.pathname, url.searchParams.get('to') ?? '', hold === null ? null : Number(hold), `http://127.0.0.1:${req.socket.localPort}`);
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
    holdUntil: (condition) => {
      tried = condition;
    },
    close: async () => {
      for (const timer of holds) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
