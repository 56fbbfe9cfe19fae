import fs from 'node:fs/promises';

import { type Config,loadConfig } from '../../server/config.js';
import { silentLogger } from '../../server/logger.js';
import { type RunningServer,startServer } from '../../server/server.js';
import type { ServiceDeps } from '../../server/services.js';
import { forFile } from './for-file.js';
import { tempDir } from './temp-dir.js';

export { tempDir };

export interface TestServer {
  srv: RunningServer;
  url: string;
  dataDir: string;
  /** Calls the admin API with the bearer token; returns status, headers and parsed body. */
  admin(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Creates an account (verified, super_user unless overridden) and a key for it. */
  account(fields?: Record<string, unknown>, keyFields?: Record<string, unknown>): Promise<{ accountId: string; key: string; keyId: string }>;
  /** Calls the v1 API with a key. */
  v1(method: string, route: string, key: string | undefined, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}


/** A real server on 127.0.0.1 with a temporary data directory; fixture pages on 127.0.0.1 are allowed. */
export async function startTestServer(overrides: Partial<Config> = {}, deps: ServiceDeps = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? (await tempDir());
  // CHROMIUM_PATH runs the suite against another Chromium, as it does the service.
  const config = loadConfig({ CHROMIUM_PATH: process.env.CHROMIUM_PATH }, { host: '127.0.0.1', port: 0, dataDir, egressAllow: ['127.0.0.1/32'], concurrency: 2, browsers: 2, ...overrides });
  const srv = await startServer(config, { log: silentLogger, ...deps });
  const admin = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${srv.url}/admin/api${route}`, {
      method,
      headers: { authorization: `Bearer ${srv.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  let n = 0;
  return {
    srv,
    url: srv.url,
    dataDir,
    admin,
    async account(fields = {}, keyFields = {}) {
      const created = await admin('POST', '/accounts', { email: `user${++n}-${Date.now()}@example.test`, email_verified: true, ...fields });
      if (created.status !== 201) throw new Error(`account: ${JSON.stringify(created.body)}`);
      const key = await admin('POST', `/accounts/${created.body.id}/keys`, { name: 'test', ...keyFields });
      if (key.status !== 201) throw new Error(`key: ${JSON.stringify(key.body)}`);
      return { accountId: created.body.id, key: key.body.key, keyId: key.body.id };
    },
    v1(method, route, key, body, headers = {}) {
      return fetch(`${srv.url}/v1${route}`, {
        method,
        headers: {
          ...(key === undefined ? {} : { 'x-api-key': key }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    async close() {
      await srv.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A test server started before the cases of the file (or block) that calls this and closed after
 * them; the object returned stands for that server once it is started.
 */
export function testServerForFile(overrides: Partial<Config> = {}, deps: ServiceDeps = {}): TestServer {
  return forFile(() => startTestServer(overrides, deps), (server) => server.close());
}

/** Polls a job until it has ended (or the time runs out). */
export async function waitForJob(server: TestServer, key: string, jobId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.v1('GET', `/screenshot/${jobId}`, key);
    const body = await res.json();
    if (body.status === 'completed' || body.status === 'failed') return body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${body.status ?? JSON.stringify(body)} after ${timeoutMs} ms`);
    // Like a well-behaved client: poll gently and honour Retry-After.
    await new Promise((r) => setTimeout(r, res.status === 429 ? Number(res.headers.get('retry-after') ?? 1) * 1000 : 250));
  }
}
