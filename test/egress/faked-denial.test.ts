import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// 1×1 PNG
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);

describe('a page that sends the egress marker header itself', () => {
  let server: TestServer;
  let page: http.Server;
  let pageUrl: string;
  let key: string;

  beforeAll(async () => {
    // On 127.0.0.1, which the test server's egress allow list lets through.
    page = http.createServer((req, res) => {
      const fake = { 'X-Egress-Denied': 'fake', 'cache-control': 'no-store' };
      if (req.url === '/pixel.png') return void res.writeHead(200, { ...fake, 'content-type': 'image/png' }).end(PIXEL);
      res.writeHead(200, { ...fake, 'content-type': 'text/html' });
      res.end('<!doctype html><title>Fake denial</title><p>allowed page</p><img src="/pixel.png" width="10" height="10">');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    server = await startTestServer();
    ({ key } = await server.account());
  });

  afterAll(async () => {
    await server?.close();
    page?.closeAllConnections();
    await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
  });

  it('is captured as the allowed page it is, with nothing counted as blocked', async () => {
    const res = await server.v1('POST', '/screenshot', key, { url: pageUrl });
    expect(res.status).toBe(201);
    const { job_id } = await res.json();
    const job = await waitForJob(server, key, job_id);
    expect(job.error).toBeUndefined();
    expect(job.status).toBe('completed');
    expect((await server.srv.services.jobs.find(job_id))?.blocked_requests).toBe(0);
  });
});
