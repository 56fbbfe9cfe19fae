import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { NotFoundError } from '../../server/domain-errors.js';
import { createEgressPolicy, type EgressPolicy, type Resolver } from '../../server/egress/policy.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { DeliveryStore } from '../../server/store/stores.js';
import { createWebhookService, type WebhookService, type WebhookServiceDeps } from '../../server/webhooks/webhook-service.js';
import { type Canary,startCanary } from '../egress/canary.js';
import { answered } from '../helpers/error-answer.js';
import { closedPort } from '../helpers/ports.js';
import { type Receiver,startReceiver } from './receiver.js';
import { startHelloRecorder } from './tls-hello.js';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const JOB_DATA = {
  job_id: 'job_1',
  status: 'completed',
  progress: 100,
  screenshot_url: 'http://127.0.0.1:9/files/abc.png',
  created_at: '2030-01-01 00:00:00',
  completed_at: '2030-01-01 00:00:03',
  has_page_source: true,
  page_source: '<html>must not be sent</html>',
};

/** Polls the service until the delivery for `jobId` is no longer pending. */
async function settled(service: WebhookService, jobId: string, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    const [delivery] = await service.list({ job_id: jobId });
    if (delivery && delivery.status !== 'pending') return delivery;
    if (Date.now() > end) throw new Error(`delivery for ${jobId} still pending: ${JSON.stringify(delivery)}`);
    await sleep(20);
  }
}

describe('webhook service', () => {
  let dir: string;
  let store: DeliveryStore;
  let canary: Canary;
  let policy: EgressPolicy;
  let key: string;
  const services: WebhookService[] = [];
  const receivers: Receiver[] = [];
  const resolveNames: Record<string, string[]> = {};

  const resolve: Resolver = async (host) => {
    const next = resolveNames[host]?.length > 1 ? resolveNames[host].shift() : resolveNames[host]?.[0];
    if (!next) throw Object.assign(new Error(`${host} is unknown`), { code: 'ENOTFOUND' });
    return [{ address: next, family: 4 }];
  };

  const service = (overrides: Partial<WebhookServiceDeps> = {}) => {
    const s = createWebhookService({ store, policy, secrets: async () => [key], schedule: [50, 50, 50], ...overrides });
    services.push(s);
    return s;
  };

  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };

  const job = (id: string, url: string) => ({ job_id: id, account_id: 'acc_1', callback_url: url });

  beforeAll(async () => {
    canary = await startCanary('127.0.0.2');
  });

  afterAll(async () => {
    await canary?.close();
  });

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'webhooks-'));
    store = (await openNedbStores(dir, silentLogger)).deliveries;
    policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
    key = secret();
  });

  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await fs.rm(dir, { recursive: true, force: true });
    expect(canary.hits()).toBe(0);
  });

  it('POSTs a signed event that the Standard Webhooks reference package verifies', async () => {
    const r = await receiver();
    const s = service();
    await s.start();
    await s.notify(job('job_1', `${r.url}/hook?x=1`), 'screenshot.completed', JOB_DATA);
    await r.waitFor(1);
    const [hit] = r.received;
    expect(hit.path).toBe('/hook?x=1');
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(Number(hit.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    const event = new Webhook(key).verify(hit.body, hit.headers as Record<string, string>) as Record<string, any>;
    expect(event.type).toBe('screenshot.completed');
    expect(event.data).toEqual({ ...JOB_DATA, page_source: undefined });
    expect('page_source' in event.data).toBe(false);
    expect(typeof event.timestamp).toBe('string');
    expect(() => new Webhook(secret()).verify(hit.body, hit.headers as Record<string, string>)).toThrow();
    expect(() => new Webhook(key).verify(hit.body.replace('completed', 'failed'), hit.headers as Record<string, string>)).toThrow();
    const delivery = await settled(s, 'job_1');
    expect(delivery).toMatchObject({ id: hit.headers['webhook-id'], status: 'succeeded', type: 'screenshot.completed', url: `${r.url}/hook?x=1` });
    expect(delivery.attempts).toEqual([{ at: expect.any(String), status_code: 200, error: null, duration_ms: expect.any(Number), manual: false }]);
  });

  it('retries a receiver answering 500, 500, 200 and succeeds exactly once with a stable id', async () => {
    const r = await receiver([500, 500, 200]);
    const s = service();
    await s.start();
    await s.notify(job('job_2', r.url), 'screenshot.failed', { job_id: 'job_2', status: 'failed', error: 'timeout' });
    const delivery = await settled(s, 'job_2');
    await sleep(300); // nothing more may arrive once it succeeded
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((h) => h.headers['webhook-id']))).toEqual(new Set([delivery.id]));
    for (const hit of r.received) expect(() => new Webhook(key).verify(hit.body, hit.headers as Record<string, string>)).not.toThrow();
    expect(new Set(r.received.map((h) => h.body)).size).toBe(1);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts.map((a) => [a.status_code, a.error])).toEqual([
      [500, 'the receiver answered 500'],
      [500, 'the receiver answered 500'],
      [200, null],
    ]);
  });

  it('stops retrying after 410 Gone', async () => {
    const r = await receiver([410], { fallback: 200 });
    const s = service();
    await s.start();
    await s.notify(job('job_3', r.url), 'screenshot.completed', JOB_DATA);
    const delivery = await settled(s, 'job_3');
    await sleep(300);
    expect(r.received).toHaveLength(1);
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(delivery.attempts[0]).toMatchObject({ status_code: 410, error: 'the receiver answered 410 Gone' });
  });

  it('does not follow a redirect and counts it as a failed attempt', async () => {
    const elsewhere = await receiver();
    const r = await receiver([{ status: 302, headers: { location: `${elsewhere.url}/moved` } }], { fallback: 204 });
    const s = service();
    await s.start();
    await s.notify(job('job_4', r.url), 'screenshot.completed', JOB_DATA);
    const delivery = await settled(s, 'job_4');
    expect(elsewhere.received).toHaveLength(0);
    expect(delivery.attempts.map((a) => [a.status_code, a.error])).toEqual([
      [302, 'redirect (302) not followed'],
      [204, null],
    ]);
  });

  it('cuts off a receiver that never answers and tries again later', async () => {
    const r = await receiver(['hang'], { fallback: 200 });
    const s = service({ timeoutMs: 400 });
    await s.start();
    const before = Date.now();
    await s.notify(job('job_5', r.url), 'screenshot.completed', JOB_DATA);
    const delivery = await settled(s, 'job_5');
    const elapsed = Date.now() - before;
    expect(delivery.status).toBe('succeeded');
    // The message is written from the same setting the request's time-out is given.
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: 'timed out after 400 ms' });
    // A timer never fires early; and the attempt took no longer than what the test saw pass, a
    // bound measured here rather than guessed for however loaded the machine is.
    expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(350);
    expect(delivery.attempts[0].duration_ms).toBeLessThanOrEqual(elapsed);
  });

  it('waits as long as a 429 answer asks in Retry-After', async () => {
    const r = await receiver([{ status: 429, headers: { 'retry-after': '1' } }], { fallback: 200 });
    const s = service();
    await s.start();
    await s.notify(job('job_6', r.url), 'screenshot.completed', JOB_DATA);
    await settled(s, 'job_6');
    expect(r.received).toHaveLength(2);
    expect(r.received[1].at - r.received[0].at).toBeGreaterThanOrEqual(950);
  });

  it('marks the delivery failed after the last scheduled attempt and shows every attempt', async () => {
    const r = await receiver([], { fallback: 503 });
    const s = service({ schedule: [30, 30] });
    await s.start();
    await s.notify(job('job_7', r.url), 'screenshot.completed', JOB_DATA);
    const delivery = await settled(s, 'job_7');
    await sleep(200);
    expect(r.received).toHaveLength(3);
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null, completed_at: expect.any(String) });
    expect(delivery.attempts).toHaveLength(3);
  });

  it('retries a receiver that refuses connections', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/hook`;
    const s = service({ schedule: [30] });
    await s.start();
    await s.notify(job('job_8', url), 'screenshot.completed', JOB_DATA);
    const delivery = await settled(s, 'job_8');
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(2);
    expect(delivery.attempts[0].error).toMatch(/ECONNREFUSED/);
  });

  it('signs with the previous secret too while the account is within a day of a rotation', async () => {
    const previous = secret();
    const r = await receiver();
    const s = service({ secrets: async () => [key, previous] });
    await s.start();
    await s.notify(job('job_9', r.url), 'screenshot.completed', JOB_DATA);
    await r.waitFor(1);
    const hit = r.received[0];
    expect(() => new Webhook(previous).verify(hit.body, hit.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(key).verify(hit.body, hit.headers as Record<string, string>)).not.toThrow();
  });

  it('redelivers on request with the same webhook-id, as a manual attempt', async () => {
    const r = await receiver();
    const s = service();
    await s.start();
    await s.notify(job('job_10', r.url), 'screenshot.completed', JOB_DATA);
    const first = await settled(s, 'job_10');
    const again = await s.redeliver(first.id);
    expect(r.received).toHaveLength(2);
    expect(r.received[1].headers['webhook-id']).toBe(first.id);
    expect(again.status).toBe('succeeded');
    expect(again.attempts.map((a) => a.manual)).toEqual([false, true]);
    await expect(s.redeliver('msg_unknown').catch(answered)).rejects.toMatchObject({ status: 404 });
    await expect(s.redeliver('msg_unknown')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lists deliveries newest first, filtered by job', async () => {
    const r = await receiver();
    const s = service();
    await s.start();
    await s.notify(job('job_a', r.url), 'screenshot.completed', JOB_DATA);
    await sleep(5);
    await s.notify(job('job_b', r.url), 'screenshot.failed', JOB_DATA);
    await r.waitFor(2);
    expect((await s.list({})).map((d) => d.job_id)).toEqual(['job_b', 'job_a']);
    expect((await s.list({ job_id: 'job_a' })).map((d) => d.job_id)).toEqual(['job_a']);
    expect(await s.list({ job_id: 'job_none' })).toEqual([]);
  });

  it('does not deliver to an address the egress policy denies, and says why', async () => {
    const s = service();
    await s.start();
    await s.notify(job('job_11', `${canary.origin}/hook`), 'screenshot.completed', JOB_DATA);
    await s.notify(job('job_12', `http://0x7f000002:${canary.port}/hook`), 'screenshot.completed', JOB_DATA);
    resolveNames['canary.test'] = ['127.0.0.2'];
    await s.notify(job('job_13', `http://canary.test:${canary.port}/hook`), 'screenshot.completed', JOB_DATA);
    for (const id of ['job_11', 'job_12']) {
      const delivery = await settled(s, id);
      expect(delivery.status).toBe('failed');
      expect(delivery.attempts).toEqual([expect.objectContaining({ status_code: null, error: 'blocked by egress policy: 127.0.0.2 is a loopback address' })]);
    }
    expect((await settled(s, 'job_13')).attempts[0].error).toBe('blocked by egress policy: canary.test resolves to 127.0.0.2, a loopback address');
    expect(canary.hits()).toBe(0);
  });

  it('connects to the vetted address of a hostname, keeping its Host header', async () => {
    const r = await receiver();
    resolveNames['hooks.test'] = ['127.0.0.1'];
    const s = service();
    await s.start();
    await s.notify(job('job_14', `http://hooks.test:${r.port}/in`), 'screenshot.completed', JOB_DATA);
    expect((await settled(s, 'job_14')).status).toBe('succeeded');
    expect(r.received[0].headers.host).toBe(`hooks.test:${r.port}`);
  });

  it('sends the callback host as the TLS server name while connecting to the vetted address', async () => {
    const tls = await startHelloRecorder();
    try {
      resolveNames['secure-hooks.test'] = ['127.0.0.1'];
      const s = service({ schedule: [] });
      await s.start();
      await s.notify(job('job_tls', `https://secure-hooks.test:${tls.port}/in`), 'screenshot.completed', JOB_DATA);
      const delivery = await settled(s, 'job_tls');
      expect(tls.names).toEqual(['secure-hooks.test']);
      expect(delivery.status).toBe('failed');
    } finally {
      await tls.close();
    }
  });

  it('checks the name again on every attempt, so rebinding it to a denied address stops the delivery', async () => {
    // The receiver and the canary share a port, so only the address decides which one is reached.
    const r = await receiver([500], { port: canary.port });
    resolveNames['rebind.test'] = ['127.0.0.1', '127.0.0.2'];
    const s = service();
    await s.start();
    await s.notify(job('job_15', `http://rebind.test:${canary.port}/in`), 'screenshot.completed', JOB_DATA);
    const delivery = await settled(s, 'job_15');
    expect(r.received).toHaveLength(1);
    expect(delivery.attempts.map((a) => a.error)).toEqual([
      'the receiver answered 500',
      'blocked by egress policy: rebind.test resolves to 127.0.0.2, a loopback address',
    ]);
    expect(canary.hits()).toBe(0);
  });

  it('stops scheduling on stop() and leaves the delivery pending for the next start', async () => {
    const r = await receiver([500], { fallback: 200 });
    const s = service({ schedule: [300] });
    await s.start();
    await s.notify(job('job_16', r.url), 'screenshot.completed', JOB_DATA);
    await r.waitFor(1);
    await sleep(50);
    await s.stop();
    await sleep(500);
    expect(r.received).toHaveLength(1);
    const [pending] = await s.list({ job_id: 'job_16' });
    expect(pending.status).toBe('pending');
    await s.start();
    expect((await settled(s, 'job_16')).status).toBe('succeeded');
  });

  it('cuts off an attempt still running when stop() runs out of patience, without recording it', async () => {
    const r = await receiver(['hang'], { fallback: 200 });
    // The attempt's own time-out is far off, so only stop() can end it within the test.
    const s = service({ stopTimeoutMs: 200, timeoutMs: 30_000 });
    await s.start();
    await s.notify(job('job_17', r.url), 'screenshot.completed', JOB_DATA);
    await r.waitFor(1);
    const started = Date.now();
    await s.stop();
    const waited = Date.now() - started;
    // It waited its patience, and far less than the default patience of 5 s: the margin over
    // 200 ms is for a loaded machine, and still tells this setting from the default.
    expect(waited).toBeGreaterThanOrEqual(195);
    expect(waited).toBeLessThan(4_000);
    const [delivery] = await s.list({ job_id: 'job_17' });
    expect(delivery).toMatchObject({ status: 'pending', attempts: [] });
  });
});
