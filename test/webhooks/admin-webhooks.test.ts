import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { adminWebhookRoutes } from '../../server/api/admin-webhooks.js';
import { errorMiddleware } from '../../server/api/error-middleware.js';
import { createEgressPolicy } from '../../server/egress/policy.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { createWebhookService, type WebhookService } from '../../server/webhooks/webhook-service.js';
import { risingClock } from '../helpers/rising-clock.js';
import { type Receiver,startReceiver } from './receiver.js';

describe('admin webhook routes', () => {
  let dir: string;
  let receiver: Receiver;
  let webhooks: WebhookService;
  let server: Server;
  let base: string;
  let deliveryId: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'admin-webhooks-'));
    receiver = await startReceiver([], { fallback: 503 });
    webhooks = createWebhookService({
      store: (await openNedbStores(dir, silentLogger)).deliveries,
      policy: createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }),
      secrets: async () => [`whsec_${randomBytes(32).toString('base64')}`],
      schedule: [],
      // The list is newest first by creation time: job_2's delivery must be stamped after job_1's
      // even when both fall in one millisecond.
      clock: risingClock(),
    });
    await webhooks.start();
    await webhooks.notify({ job_id: 'job_1', account_id: 'acc_1', callback_url: receiver.url }, 'screenshot.failed', { job_id: 'job_1' });
    await webhooks.notify({ job_id: 'job_2', account_id: 'acc_1', callback_url: receiver.url }, 'screenshot.completed', { job_id: 'job_2' });
    await receiver.waitFor(2);
    // As the core mounts it: on the admin router, whose prefix is /admin/api.
    const router = new Router({ prefix: '/admin/api' });
    adminWebhookRoutes(router, webhooks);
    const app = new Koa();
    app.use(errorMiddleware(() => {}));
    app.use(router.routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await webhooks?.stop();
    await receiver?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  const get = async (url: string) => {
    const res = await fetch(base + url, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('lists a job’s deliveries with their attempts', async () => {
    // The last attempt is written just after the receiver answers.
    for (let i = 0; i < 100 && (await get('/admin/api/webhooks?job_id=job_1')).body.deliveries[0].status === 'pending'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { status, body } = await get('/admin/api/webhooks?job_id=job_1');
    expect(status).toBe(200);
    expect(body.deliveries).toHaveLength(1);
    const [delivery] = body.deliveries;
    deliveryId = delivery.id;
    expect(delivery).toMatchObject({
      job_id: 'job_1',
      account_id: 'acc_1',
      url: receiver.url,
      type: 'screenshot.failed',
      status: 'failed',
      next_attempt_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(delivery.attempts).toEqual([
      { at: expect.any(String), status_code: 503, error: 'the receiver answered 503', duration_ms: expect.any(Number), manual: false },
    ]);
  });

  it('lists every delivery, newest first, without a job_id', async () => {
    const { body } = await get('/admin/api/webhooks');
    expect(body.deliveries.map((d: { job_id: string }) => d.job_id)).toEqual(['job_2', 'job_1']);
    expect((await get('/admin/api/webhooks?limit=1')).body.deliveries).toHaveLength(1);
  });

  it('answers 400 for a bad limit', async () => {
    const { status, body } = await get('/admin/api/webhooks?limit=0');
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Bad request', message: 'limit must be a whole number from 1 to 1000' });
  });

  it('redelivers now and answers the delivery with the new attempt', async () => {
    receiver.replies.push(200);
    const res = await fetch(`${base}/admin/api/webhooks/${deliveryId}/redeliver`, { method: 'POST', signal: AbortSignal.timeout(5000) });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ id: deliveryId, status: 'succeeded' });
    expect(body.attempts.map((a: { status_code: number; manual: boolean }) => [a.status_code, a.manual])).toEqual([
      [503, false],
      [200, true],
    ]);
    expect(receiver.received.at(-1)?.headers['webhook-id']).toBe(deliveryId);
  });

  it('answers 404 when redelivering an unknown delivery', async () => {
    const res = await fetch(`${base}/admin/api/webhooks/msg_nope/redeliver`, { method: 'POST', signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Not found', message: 'No webhook delivery msg_nope' });
  });
});
