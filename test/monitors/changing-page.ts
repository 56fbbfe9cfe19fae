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
  close(): Promise<void>;
}

export async function startChangingPage(): Promise<ChangingPage> {
  const state = { box: '#2060c0', requests: 0, broken: false };
  const server = http.createServer((req, res) => {
    state.requests++;
    const body =
      '<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;background:#fff;font:20px sans-serif}</style></head><body>' +
      '<h1 style="margin:0;padding:40px 100px">A watched page</h1>' +
      `<div id="box" style="position:absolute;left:100px;top:300px;width:200px;height:100px;background:${state.box}"></div>` +
      `<div id="clock" style="position:absolute;left:600px;top:300px;width:240px;height:60px;overflow:hidden;font:40px monospace">${state.requests * 7919}-${Date.now() % 100000}</div>` +
      '</body></html>';
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
