import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer,waitForJob } from '../helpers/test-server.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let fixtures: FixtureServer;
let server: TestServer;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ ratePerSecond: 1000 });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function until<T>(get: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('webhook on job end', () => {
  it('posts a signed screenshot.completed event carrying the status resource', async () => {
    const { key, accountId } = await server.account();
    const created = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, callback_url: `${receiverUrl}?ok` })
    ).json();
    const job = await waitForJob(server, key, created.job_id);
    const hook = await until(() => received.find((r) => r.body.includes(created.job_id)));
    const secret = (await server.admin('GET', `/accounts/${accountId}/webhook-secret`)).body.secret;
    const verified = new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    }) as { type: string; data: Record<string, unknown> };
    expect(verified.type).toBe('screenshot.completed');
    expect(verified.data).toEqual(job);
    expect(verified.data).not.toHaveProperty('page_source');
  });

  it('posts screenshot.failed with the error for a failed job', async () => {
    const { key } = await server.account();
    const created = await (
      await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:9/gone', callback_url: receiverUrl })
    ).json();
    await waitForJob(server, key, created.job_id);
    const hook = await until(() => received.find((r) => r.body.includes(created.job_id)));
    const event = JSON.parse(hook.body);
    expect(event.type).toBe('screenshot.failed');
    expect(event.data).toMatchObject({ job_id: created.job_id, status: 'failed', progress: 0 });
    expect(event.data.error).toBeTruthy();
    const deliveries = (await server.admin('GET', `/webhooks?job_id=${created.job_id}`)).body.deliveries;
    expect(deliveries).toHaveLength(1);
  });
});
