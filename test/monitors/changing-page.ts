import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A page on loopback whose content the test changes between checks: a white page with a
 * heading, a box (`#box`) whose colour is `box`, and a clock (`#clock`) showing a new number at
 * every request, in a box of fixed size.
 */
export interface ChangingPage {
  url: string;
  /** The box's colour; the box is 200×100 CSS px at (100, 300). */
  box: string;
  requests: number;
  /** When true the page answers 500 (a monitor with fail_on_http_error then fails). */
  broken: boolean;
  /** What the page shows: itself, nothing but its white background, or a panel still loading (aria-busy). */
  drawn: 'whole' | 'blank' | 'loading';
  /** The price the page shows under its heading; none when null (the default). */
  price: string | null;
  /** When false the clock is left out, so the page's text stays the same from one check to the next. */
  clock: boolean;
  /** Pictures of 100×60 CSS px in a row under the heading, the last `missing` of them answered 404; none by default. */
  images: { shown: number; missing: number };
  /** The heading's web font: none (the default), or one whose file answers 404. */
  font: 'none' | 'failed';
  close(): Promise<void>;
}

/** A PNG of one blue pixel, which the page's pictures stretch. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAADElEQVR4nGNQSDgAAAHkAUGcFuGgAAAAAElFTkSuQmCC', 'base64');

/**
 * The clock's 10 digits (240 px of 40 px monospace) at the n-th request: every digit differs from
 * the one before it at any other request but every tenth, so two captures in a row differ at all
 * ten places and a mask proposed from them covers what any later one shows. (A count of requests
 * times a prime kept its leading digit for a dozen requests, and a mask proposed then missed it.)
 */
const clockDigits = (n: number) => Array.from({ length: 10 }, (_, i) => (n * 7 + i * 3) % 10).join('');

export async function startChangingPage(): Promise<ChangingPage> {
  const state = {
    box: '#2060c0',
    requests: 0,
    broken: false,
    drawn: 'whole' as ChangingPage['drawn'],
    price: null as string | null,
    clock: true,
    images: { shown: 0, missing: 0 },
    font: 'none' as ChangingPage['font'],
  };
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/picture/')) {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(PIXEL);
      return;
    }
    if (req.url?.startsWith('/gone/')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('gone');
      return;
    }
    state.requests++;
    const font = state.font === 'failed' ? "@font-face{font-family:Watched;src:url(/gone/watched.woff2) format('woff2')}h1{font-family:Watched,sans-serif}" : '';
    const head = `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;background:#fff;font:20px sans-serif}${font}</style></head><body>`;
    const { images } = state;
    const pictures = Array.from({ length: images.shown }, (_, i) => `<img src="/${i < images.shown - images.missing ? 'picture' : 'gone'}/${i}.png" style="width:100px;height:60px;margin-right:10px">`).join('');
    const content =
      '<h1 style="margin:0;padding:40px 100px">A watched page</h1>\n' +
      (state.price === null ? '' : `<p id="price" style="margin:0 100px">Price: ${state.price} EUR</p>\n`) +
      (images.shown ? `<div style="margin:0 100px">${pictures}</div>\n` : '') +
      `<div id="box" style="position:absolute;left:100px;top:300px;width:200px;height:100px;background:${state.box}"></div>` +
      (state.clock
        ? `<div id="clock" style="position:absolute;left:600px;top:300px;width:240px;height:60px;overflow:hidden;font:40px monospace">${clockDigits(state.requests)}</div>`
        : '');
    const shown = {
      whole: content,
      blank: '',
      loading: '<h1 style="margin:0;padding:40px 100px">A watched page</h1><section aria-busy="true" style="margin:0 100px;width:400px;height:200px;background:#eee">Loading…</section>',
    }[state.drawn];
    const body = `${head}${shown}</body></html>`;
    res.writeHead(state.broken ? 500 : 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const page: ChangingPage = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/watched`,
    get box() {
      return state.box;
    },
    set box(colour: string) {
      state.box = colour;
    },
    get broken() {
      return state.broken;
    },
    set broken(value: boolean) {
      state.broken = value;
    },
    get drawn() {
      return state.drawn;
    },
    set drawn(value: ChangingPage['drawn']) {
      state.drawn = value;
    },
    get price() {
      return state.price;
    },
    set price(value: string | null) {
      state.price = value;
    },
    get clock() {
      return state.clock;
    },
    set clock(value: boolean) {
      state.clock = value;
    },
    get images() {
      return state.images;
    },
    set images(value: { shown: number; missing: number }) {
      state.images = value;
    },
    get font() {
      return state.font;
    },
    set font(value: ChangingPage['font']) {
      state.font = value;
    },
    get requests() {
      return state.requests;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return page;
}
