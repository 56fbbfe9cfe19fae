import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { createApp } from './app.js';
import { answerClientError } from './client-errors.js';
import type { Config } from './config.js';
import { createServices, type ServiceDeps, type Services } from './services.js';
import { isDiskFull } from './store/disk-full.js';

export interface RunningServer {
  /** Where this machine reaches the server, e.g. http://127.0.0.1:8080 */
  url: string;
  adminToken: string;
  /** The control panel's address carrying the token in its fragment. */
  adminUrl: string;
  services: Services;
  close(): Promise<void>;
}

const localHost = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host);

/** Starts the services and the HTTP server; resolves once it is listening and ready. */
export async function startServer(config: Readonly<Config>, deps: ServiceDeps = {}): Promise<RunningServer> {
  const services = await createServices(config, deps);
  const server = http.createServer();
  try {
    await services.start();
    const app = createApp(services);
    server.on('request', app.callback());
    server.on('clientError', answerClientError);
    server.requestTimeout = 60_000;
    server.headersTimeout = 20_000;
    server.keepAliveTimeout = 5_000;
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
