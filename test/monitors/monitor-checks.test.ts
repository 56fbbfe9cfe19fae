import http from 'node:http';
import type { AddressInfo } from 'node:net';

import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from './changing-page.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';

// Real captures of a page on loopback that the test changes between two checks.

let server: TestServer;
let page: ChangingPage;
let receiver: http.Server;
let hookUrl: string;
const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  page = await startChangingPage();
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
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await server?.close();
  await page?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

interface Check {
  job_id: string;
  status: string;
  changed: boolean | null;
  difference: number | null;
  screenshot_url: string | null;
  diff_url: string | null;
  baseline_job_id: string | null;
  error: string | null;
}

/** Runs a check now and waits until it is settled (its job ended and its comparison made). */
async function check(key: string, monitorId: string): Promise<Check> {
  const run = await server.v1('POST', `/monitors/${monitorId}/run`, key);
  expect(run.status).toBe(201);
  const { job_id } = await run.json();
  await waitForJob(server, key, job_id);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { checks } = await (await server.v1('GET', `/monitors/${monitorId}/checks`, key)).json();
    const found = (checks as Check[]).find((c) => c.job_id === job_id);
    if (found && found.status !== 'pending') return found;
    if (Date.now() > deadline) throw new Error(`check ${job_id} still pending`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const monitorOf = async (key: string, body: Record<string, unknown>) => {
  const res = await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, callback_url: hookUrl, ...NO_PROPOSED_MASKS, ...body });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
};

const hooksOf = (monitorId: string) => received.filter((r) => r.body.includes(monitorId)).map((r) => ({ ...r, event: JSON.parse(r.body) }));

/** The bounding box of the pure red pixels of a PNG. */
async function redBox(png: Buffer): Promise<{ left: number; top: number; right: number; bottom: number; count: number }> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const box = { left: Infinity, top: Infinity, right: -1, bottom: -1, count: 0 };
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      const i = (y * info.width + x) * 4;
      if (data[i] > 230 && data[i + 1] < 40 && data[i + 2] < 40) {
        box.count++;
        box.left = Math.min(box.left, x);
        box.top = Math.min(box.top, y);
        box.right = Math.max(box.right, x);
        box.bottom = Math.max(box.bottom, y);
      }
    }
  }
  return box;
}

describe('checks on a page that changes', () => {
  it('finds the change where the page changed, with its diff picture and a signed monitor.changed', async () => {
    const { key, accountId } = await server.account();
    page.box = '#2060c0';
    const monitor = await monitorOf(key, { mask_selectors: ['#clock'] });
    const first = await check(key, monitor.id);
    expect(first).toMatchObject({ status: 'completed', changed: null, difference: null, diff_url: null });

    page.box = '#e0a020';
    const second = await check(key, monitor.id);
    expect(second.status).toBe('completed');
    expect(second.changed).toBe(true);
    // The box is 200×100 of 1920×1080 pixels.
    expect(second.difference).toBeCloseTo((200 * 100) / (1920 * 1080), 3);
    expect(second.baseline_job_id).toBe(first.job_id);

    const diff = await fetch(second.diff_url!);
    expect(diff.status).toBe(200);
    expect(diff.headers.get('content-type')).toBe('image/png');
    const box = await redBox(Buffer.from(await diff.arrayBuffer()));
    expect(box).toMatchObject({ left: 100, top: 300, right: 299, bottom: 399 });

    const hook = await until(() => hooksOf(monitor.id).find((h) => h.event.type === 'monitor.changed'));
    const secret = (await server.admin('GET', `/accounts/${accountId}/webhook-secret`)).body.secret;
    const verified = new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    }) as { type: string; data: Record<string, unknown> };
    expect(verified.type).toBe('monitor.changed');
    expect(verified.data).toMatchObject({
      monitor_id: monitor.id,
      job_id: second.job_id,
      difference: second.difference,
      screenshot_url: second.screenshot_url,
      baseline_screenshot_url: first.screenshot_url,
      diff_url: second.diff_url,
    });
  });

  it('does not count a masked clock, and sends no webhook for an unchanged page', async () => {
    const { key } = await server.account();
    const masked = await monitorOf(key, { mask_selectors: ['#clock'], threshold: 0 });
    await check(key, masked.id);
    const again = await check(key, masked.id);
    expect(again).toMatchObject({ status: 'completed', changed: false, difference: 0, diff_url: null });

    // The same page without the mask (and with the masked one's threshold of 0): the clock alone is a change.
    const bare = await monitorOf(key, { threshold: 0 });
    await check(key, bare.id);
    const ticked = await check(key, bare.id);
    expect(ticked.changed).toBe(true);
    const box = await redBox(Buffer.from(await (await fetch(ticked.diff_url!)).arrayBuffer()));
    expect(box.left).toBeGreaterThanOrEqual(600);
    expect(box.top).toBeGreaterThanOrEqual(300);
    expect(box.bottom).toBeLessThan(360);

    await until(() => hooksOf(bare.id).find((h) => h.event.type === 'monitor.changed'));
    // Deliveries are stored before they are sent: the masked monitor has none at all.
    const deliveries = (await server.admin('GET', `/webhooks?job_id=${again.job_id}`)).body.deliveries;
    expect(deliveries).toEqual([]);
    expect(hooksOf(masked.id)).toEqual([]);
  });

  it('compares with the pinned check once one is pinned', async () => {
    const { key } = await server.account();
    page.box = '#2060c0';
    const monitor = await monitorOf(key, { mask_selectors: ['#clock'] });
    const pinned = await check(key, monitor.id);
    const pin = await server.v1('POST', `/monitors/${monitor.id}/checks/${pinned.job_id}/pin`, key);
    expect(pin.status).toBe(200);
    expect(await pin.json()).toMatchObject({ baseline: 'pinned', pinned_job_id: pinned.job_id });
    page.box = '#20a040';
    const changed = await check(key, monitor.id);
    expect(changed.baseline_job_id).toBe(pinned.job_id);
    const third = await check(key, monitor.id);
    // Against the pinned picture, not the previous one: still changed.
    expect(third).toMatchObject({ changed: true, baseline_job_id: pinned.job_id });
    expect((await server.v1('POST', `/monitors/${monitor.id}/checks/job_000000000000000000000000/pin`, key)).status).toBe(404);
    page.box = '#2060c0';
  });

  it('sends monitor.failed once when checks start failing, and again after a success', async () => {
    const { key } = await server.account();
    const monitor = await monitorOf(key, { mask_selectors: ['#clock'], fail_on_http_error: true });
    const failures = () => hooksOf(monitor.id).filter((h) => h.event.type === 'monitor.failed');
    try {
      page.broken = true;
      expect((await check(key, monitor.id)).status).toBe('failed');
      expect((await check(key, monitor.id)).status).toBe('failed');
      await until(() => (failures().length ? true : undefined));
      page.broken = false;
      expect((await check(key, monitor.id)).status).toBe('completed');
      page.broken = true;
      const failed = await check(key, monitor.id);
      expect(failed.error).toContain('500');
      await until(() => (failures().length >= 2 ? true : undefined));
      expect(failures()).toHaveLength(2);
    } finally {
      page.broken = false;
    }
  });

  it('makes one check per device and compares each with the same device’s previous picture', async () => {
    const { key } = await server.account();
    const monitor = await monitorOf(key, { devices: ['desktop', 'mobile'], mask_selectors: ['#clock'] });
    const runOnce = async () => {
      const { job_id } = await (await server.v1('POST', `/monitors/${monitor.id}/run`, key)).json();
      return job_id as string;
    };
    await runOnce();
    const settledAll = async (n: number) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { checks } = await (await server.v1('GET', `/monitors/${monitor.id}/checks`, key)).json();
        if (checks.length === n && checks.every((c: Check) => c.status !== 'pending')) return checks as Array<Check & { status_url: string }>;
        if (Date.now() > deadline) throw new Error('checks still pending');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const first = await settledAll(2);
    await runOnce();
    const all = await settledAll(4);
    const device = async (c: Check) => (await server.srv.services.stores.jobs.get(c.job_id))?.device;
    const newer = all.filter((c) => !first.some((f) => f.job_id === c.job_id));
    for (const check of newer) {
      expect(check).toMatchObject({ status: 'completed', changed: false, difference: 0 });
      const baseline = first.find((f) => f.job_id === check.baseline_job_id)!;
      expect(await device(baseline)).toBe(await device(check));
    }
    expect(new Set(await Promise.all(newer.map(device)))).toEqual(new Set(['desktop', 'mobile']));
  });

  it('counts each check as a call, and a run past the daily limit is refused', async () => {
    const { key } = await server.account({ daily_limit: 1 });
    const monitor = await monitorOf(key, {});
    await check(key, monitor.id);
    expect((await (await server.v1('GET', '/usage', key)).json()).calls_today).toBe(1);
    expect((await server.v1('POST', `/monitors/${monitor.id}/run`, key)).status).toBe(429);
  });
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
