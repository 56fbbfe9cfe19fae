import { randomBytes } from 'node:crypto';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createEgressPolicy } from '../../server/egress/policy.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { createWebhookService } from '../../server/webhooks/webhook-service.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { startReceiver } from './receiver.js';

let disk: Tmpfs | undefined;

beforeAll(async () => {
  const mounted = await mountTmpfs('1m', 'sa-webhooks-');
  if (typeof mounted === 'string') console.warn(`skipping the full-disk webhook test: ${mounted}`);
  else disk = mounted;
});

afterAll(async () => {
  await disk?.unmount();
});

describe('a webhook attempt whose record meets a full disk', () => {
  it('is tried again, and recorded once space comes back, without a restart', async (ctx) => {
    if (!disk) return ctx.skip();
    const stores = await openNedbStores(disk.dir, silentLogger);
    // The first attempt hangs until its time-out: long enough to fill the disk under it.
    const receiver = await startReceiver(['hang'], { fallback: 200 });
    const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false });
    const key = `whsec_${randomBytes(32).toString('base64')}`;
    const service = createWebhookService({
      store: stores.deliveries,
      policy,
      secrets: async () => [key],
      schedule: [50, 50, 50],
      timeoutMs: 500,
      storeRetryMs: 100,
    });
    try {
      await service.start();
      await service.notify({ job_id: 'job_1', account_id: 'acc_1', callback_url: receiver.url }, 'screenshot.failed', { job_id: 'job_1' });
      await receiver.waitFor(1);
      await disk.fill([path.join(disk.dir, 'webhooks.db')]);
      // Tried again while the disk is full: answered, but the answer cannot be recorded.
      await receiver.waitFor(3);
      expect((await service.list({ job_id: 'job_1' }))[0].status).toBe('pending');

      await disk.free();
      const deadline = Date.now() + 5000;
      while ((await service.list({ job_id: 'job_1' }))[0].status === 'pending' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await service.list({ job_id: 'job_1' }))[0].status).toBe('succeeded');
      const reopened = await openNedbStores(disk.dir, silentLogger);
      expect(await reopened.deliveries.list({ job_id: 'job_1', limit: 1 })).toMatchObject([{ status: 'succeeded' }]);
    } finally {
      await service.stop();
      await receiver.close();
    }
  });
});
