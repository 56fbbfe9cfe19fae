import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HEADERS_TIMEOUT_MS } from '../../server/server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// Raw sockets on loopback: 127.0.0.1 is one client, 127.0.0.2 another.

let server: TestServer;
let port: number;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  server = await startTestServer({ maxClientConnections: 3 });
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await server?.close();
});

/** An open connection from `localAddress`, once the server has accepted it. */
async function connect(localAddress = '127.0.0.1'): Promise<net.Socket> {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Everything the server sends on `socket` until it closes the connection. */
function answer(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('close', () => resolve(text));
  });
}

/** The server's count for an address, once it has seen every connection made so far. */
async function counted(address: string, expected: number) {
  for (let i = 0; i < 250 && server.srv.connections.count(address) !== expected; i++) await new Promise((r) => setTimeout(r, 20));
  expect(server.srv.connections.count(address)).toBe(expected);
}

const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

describe('connections per client address', () => {
  it(`answers a request whose headers stall 408 within about ${HEADERS_TIMEOUT_MS / 1000} seconds, as documented`, async () => {
    // First, right after the server began listening: Node's default check, every 30 s from
    // then, would answer it only at ~30 s.
    const socket = await connect('127.0.0.3');
    const started = Date.now();
    const text = answer(socket);
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(await text).toMatch(/^HTTP\/1\.1 408 /);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    // Node checks its time-outs every connectionsCheckingInterval: 30 s by default, 1 s here.
    expect(elapsed).toBeLessThan(HEADERS_TIMEOUT_MS + 5_000);
  }, 60_000);

  it('refuses a connection over the limit with 429 and closes it, while other addresses go on', async () => {
    const held = [await connect(), await connect(), await connect()];
    await counted('127.0.0.1', 3);
    const extra = await connect();
    const refused = answer(extra);
    extra.write(GET('/healthz'));
    const text = await refused;
    expect(text).toMatch(/^HTTP\/1\.1 429 /);
    expect(text).toMatch(/\r\nRetry-After: 1\r\n/i);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ error: 'Rate limit exceeded', message: expect.stringMatching(/open connections.*limit is 3/), retry_after: 1 });

    // Another address is not affected, nor the connections already held.
    const other = await connect('127.0.0.2');
    const fromOther = answer(other);
    other.end(GET('/healthz'));
    expect(await fromOther).toMatch(/^HTTP\/1\.1 200 /);
    const first = answer(held[0]);
    held[0].end(GET('/healthz').replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
    expect(await first).toMatch(/^HTTP\/1\.1 200 /);

    // A closed connection frees its place.
    await counted('127.0.0.1', 2);
    const again = await connect();
    const fromAgain = answer(again);
    again.end(GET('/healthz'));
    expect(await fromAgain).toMatch(/^HTTP\/1\.1 200 /);
    for (const socket of held) socket.destroy();
  });

});
