import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { type Receiver, startReceiver } from './receiver.js';

// batch.completed, on a real server and store with a scripted engine (every capture a page captured well).

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ ratePerSecond: 1000 }, { engine: new FakeCaptureEngine() });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

/** Denied by the egress policy (the test server allows 127.0.0.1 only): such a job fails as soon as it runs. */
const DENIED = 'http://127.0.0.2:1/';

describe('the batch.completed webhook', () => {
  it("is sent signed once the batch ends, with its counts and archive; an item's own webhook only when the item asks", async () => {
    const { key, accountId } = await server.account();
    const items = [{ url: 'http://127.0.0.1:9/a' }, { url: 'http://127.0.0.1:9/b', callback_url: `${receiver.url}/item` }, { url: DENIED }];
    const created = await (await server.v1('POST', '/batches', key, { items, callback_url: `${receiver.url}/batch` })).json();
    await receiver.waitFor(2, 30_000);
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/batch', '/item']);
    const hook = receiver.received.find((r) => r.path === '/batch')!;
    const secret = (await server.admin('GET', `/accounts/${accountId}/webhook-secret`)).body.secret;
    const verified = new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    }) as { type: string; data: Record<string, unknown> };
    expect(verified).toMatchObject({
      type: 'batch.completed',
      data: {
        batch_id: created.batch_id,
        status: 'completed',
        total: 3,
        counts: { completed: 2, failed: 1, not_ended: 0 },
        status_url: created.status_url,
        archive_url: `${created.status_url}/archive`,
      },
    });
    expect(JSON.parse(receiver.received.find((r) => r.path === '/item')!.body)).toMatchObject({ type: 'screenshot.completed', data: { url: 'http://127.0.0.1:9/b' } });
  });

  it('is sent for a cancelled batch too, saying so', async () => {
    const { key } = await server.account();
    const before = receiver.received.length;
    server.srv.services.queue.pause();
    try {
      const items = Array.from({ length: 20 }, (_, i) => ({ url: `http://127.0.0.1:9/c${i}` }));
      const created = await (await server.v1('POST', '/batches', key, { items, callback_url: `${receiver.url}/cancelled` })).json();
      expect((await server.v1('DELETE', `/batches/${created.batch_id}`, key)).status).toBe(200);
    } finally {
      server.srv.services.queue.resume();
    }
    await receiver.waitFor(before + 1, 30_000);
    const hook = JSON.parse(receiver.received[before].body);
    expect(hook).toMatchObject({ type: 'batch.completed', data: { status: 'cancelled', total: 20, counts: { completed: 0, failed: 0, not_ended: 20 } } });
  });
});
