import { createHash } from 'node:crypto';
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

/**
 * A server that must never be reached: it counts every TCP connection (HTTP requests, WebSocket
 * upgrades, TLS hellos alike), every request on a kept-alive one, and every UDP datagram on the
 * same port.
 */
export interface Canary {
  host: string;
  port: number;
  /** e.g. "http://127.0.0.2:41234" */
  origin: string;
  /** TCP connections accepted, HTTP requests (also on reused connections) and UDP datagrams. */
  hits(): number;
  /** Paths of the HTTP requests it answered. */
  paths: string[];
  close(): Promise<void>;
}

/** Starts a canary on `host` (port 0 picks a free one; a given port is used as is). */
export async function startCanary(host: string, port = 0): Promise<Canary> {
  let connections = 0;
  let requests = 0;
  let datagrams = 0;
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    requests++;
    paths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html', 'access-control-allow-origin': '*' });
    res.end('<!doctype html><title>canary</title><p>canary reached</p>');
  });
  server.on('connection', () => connections++);
  // A tiny WebSocket handshake, so an allowed control run can show a socket really opens.
  server.on('upgrade', (req, socket: net.Socket) => {
    requests++;
    paths.push(req.url ?? '');
    const key = req.headers['sec-websocket-key'] ?? '';
    const accept = createAccept(String(key));
    socket.end(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  const udp = dgram.createSocket('udp4');
  udp.on('message', () => datagrams++);
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(actual, host, () => resolve());
  });
  return {
    host,
    port: actual,
    origin: `http://${host}:${actual}`,
    hits: () => connections + requests + datagrams,
    paths,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    },
  };
}

function createAccept(key: string): string {
  return createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC11B85`).digest('base64');
}
