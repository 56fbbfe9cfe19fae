import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';

import { ERROR_TITLES } from './api/error-responses.js';
import { rateKey } from './api/file-routes.js';
import { createApp } from './app.js';
import { answerClientError } from './client-errors.js';
import type { Config } from './config.js';
import { ConnectionLimit } from './limits/connection-limit.js';
import { createServices, type ServiceDeps, type Services } from './services.js';
import { isDiskFull } from './store/disk-full.js';

export interface RunningServer {
  /** Where this machine reaches the server, e.g. http://127.0.0.1:8080 */
  url: string;
  adminToken: string;
  /** The control panel's address carrying the token in its fragment. */
  adminUrl: string;
  services: Services;
  /** The open connections counted per client address. */
  connections: ConnectionLimit;
  close(): Promise<void>;
}

/** A request's headers must arrive within this, and the whole request within REQUEST_TIMEOUT_MS; else 408. */
export const HEADERS_TIMEOUT_MS = 20_000;
export const REQUEST_TIMEOUT_MS = 60_000;
/**
 * How long an idle connection is kept open for the client's next request (and announced in
 * `Keep-Alive: timeout=65`). The client must be the one to close an idle connection: one the
 * server closes as the client reuses it fails that request. So it is longer than clients keep
 * theirs (Node's http.Agent 5 s; fetch the server's hint less 1-2 s; load balancers 60 s).
 * Idle time between requests is not counted against HEADERS_TIMEOUT_MS (Node 18 and later time
 * only a request in progress), so that bound stays short against slow senders.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** How long a connection over its address's limit may stay idle before it is closed. */
const REFUSED_IDLE_MS = 5_000;

/** The answer on a connection over its address's limit: 429, and the connection closed. */
function refuseConnection(res: http.ServerResponse, max: number): void {
  const body = JSON.stringify({
    error: ERROR_TITLES[429],
    message: `Too many open connections from this address: the limit is ${max}; close some and retry`,
    retry_after: 1,
  });
  res.writeHead(429, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Retry-After': '1',
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.end(body);
}

const localHost = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host);

/** Starts the services and the HTTP server; resolves once it is listening and ready. */
export async function startServer(config: Readonly<Config>, deps: ServiceDeps = {}): Promise<RunningServer> {
  const services = await createServices(config, deps);
  // Node checks its request time-outs every connectionsCheckingInterval (30 s by default), so a
  // stalled request got its 408 only at the next check, ~30 s for a 20 s limit: check every second.
  const server = http.createServer({
    requestTimeout: REQUEST_TIMEOUT_MS,
    headersTimeout: HEADERS_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: 1_000,
  });
  const connections = new ConnectionLimit(config.maxClientConnections, config.trustProxy, (address) => rateKey(address));
  try {
    await services.start();
    const app = createApp(services).callback();
    server.on('connection', (socket: Socket) => {
      // A refused connection is told so at its first request; one that sends none is closed soon.
      if (!connections.admit(socket)) socket.setTimeout(REFUSED_IDLE_MS);
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) =>
      connections.isRefused(req.socket) ? refuseConnection(res, connections.max) : app(req, res),
    );
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await services.stop(0).catch(() => undefined);
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  // The egress guard must never let a captured page reach this server's own API.
  services.egress.denyLocalPort(port);
  const url = `http://${localHost(config.host)}:${port}`;
  const serverFile = path.join(config.dataDir, 'server.json');
  try {
    fs.writeFileSync(serverFile, JSON.stringify({ url, pid: process.pid }), { mode: 0o600 });
  } catch (err) {
    if (!isDiskFull(err)) throw err;
    // A stale file would send the account and key commands to a previous run's address.
    fs.rmSync(serverFile, { force: true });
    services.log.warn({ component: 'server' }, `the disk is full; ${serverFile} was not written, so the account and key commands will not find this server`);
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    adminToken: services.adminToken,
    adminUrl: `${url}/admin/#token=${services.adminToken}`,
    services,
    connections,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // What the next start takes up again: jobs left waiting, and captures cut off at the end.
        const requeued = await services.stop();
        server.closeAllConnections();
        await stopped;
        fs.rmSync(path.join(config.dataDir, 'server.json'), { force: true });
        services.log.info({ component: 'server', requeued }, `stopped cleanly; ${requeued ?? 'an unknown number of'} jobs re-queued`);
      })();
      return closing;
    },
  };
}
