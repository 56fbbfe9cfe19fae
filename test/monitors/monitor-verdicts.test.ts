import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from './changing-page.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';

// Real captures of a page on loopback drawn blank, half-drawn or with another price between checks.

let server: TestServer;
let page: ChangingPage;
let receiver: http.Server;
let hookUrl: string;
const received: Array<{ type: string; data: Record<string, unknown> }> = [];

beforeAll(async () => {
  page = await startChangingPage();
  server = await startTestServer({ ratePerSecond: 1000 });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterEach(() => {
  Object.assign(page, { drawn: 'whole', price: null, clock: true, box: '#2060c0', images: { shown: 0, missing: 0 }, font: 'none' });
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
  verdict: string | null;
  changed: boolean | null;
  difference: number | null;
  baseline_job_id: string | null;
  inconclusive_codes: string[];
  text_change: { added: string[]; removed: string[] } | null;
  pixels_only: boolean;
  regions: Array<{ kind: string; before: Record<string, number> | null; after: Record<string, number> | null }>;
  picture_scale: number | null;
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
  const res = await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, callback_url: hookUrl, mask_selectors: ['#clock'], ...NO_PROPOSED_MASKS, ...body });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; propose_masks: boolean; proposed_masks: unknown[] };
};

const eventsOf = (monitorId: string, type: string) => received.filter((r) => r.type === type && r.data.monitor_id === monitorId);

async function until<T>(get: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('checks whose picture cannot be trusted', () => {
  it('end inconclusive when blank or half-drawn, send no change webhook and leave the baseline', async () => {
    const { key } = await server.account();
    // A settled capture of a page showing loading states waits for them to its cap: 1 s here.
    const monitor = await monitorOf(key, { settle_timeout: 1_000 });
    const first = await check(key, monitor.id);
    expect(first).toMatchObject({ status: 'completed', verdict: 'first', inconclusive_codes: [] });

    page.drawn = 'blank';
    const blank = await check(key, monitor.id);
    expect(blank).toMatchObject({ status: 'completed', verdict: 'inconclusive', changed: null, difference: null, baseline_job_id: null });
    expect(blank.inconclusive_codes).toContain('blank');
    page.drawn = 'loading';
    const loading = await check(key, monitor.id);
    expect(loading).toMatchObject({ verdict: 'inconclusive', changed: null });
    expect(loading.inconclusive_codes).toEqual(expect.arrayContaining(['placeholders']));

    page.drawn = 'whole';
    const good = await check(key, monitor.id);
    // Compared with the last good picture, not with the half-drawn one: nothing changed.
    expect(good).toMatchObject({ verdict: 'unchanged', changed: false, baseline_job_id: first.job_id });

    // One monitor.inconclusive for the run of two, and no monitor.changed at all.
    await until(() => (eventsOf(monitor.id, 'monitor.inconclusive').length ? true : undefined));
    expect(eventsOf(monitor.id, 'monitor.inconclusive')).toHaveLength(1);
    expect(eventsOf(monitor.id, 'monitor.inconclusive')[0].data).toMatchObject({ verdict: 'inconclusive', job_id: blank.job_id });
    expect(eventsOf(monitor.id, 'monitor.changed')).toEqual([]);
    expect((await server.v1('POST', `/monitors/${monitor.id}/checks/${blank.job_id}/pin`, key)).status).toBe(400);
  });

  it('end inconclusive when more than a quarter of the pictures are missing, or a web font, and not for a quarter', async () => {
    const { key } = await server.account();
    const warningsOf = async (jobId: string) => (await (await server.v1('GET', `/screenshot/${jobId}`, key)).json()).warnings;
    const missingImages = (detail: Record<string, number>) => ({ code: 'images_not_loaded', message: expect.any(String), detail });
    page.images = { shown: 4, missing: 0 };
    const monitor = await monitorOf(key, {});
    expect(await check(key, monitor.id)).toMatchObject({ verdict: 'first' });

    page.images = { shown: 4, missing: 1 };
    const few = await check(key, monitor.id);
    expect(few).toMatchObject({ verdict: 'changed', inconclusive_codes: [] });
    expect(await warningsOf(few.job_id)).toContainEqual(missingImages({ images: 4, missing: 1, missing_share: 0.25 }));

    page.images = { shown: 4, missing: 2 };
    const many = await check(key, monitor.id);
    expect(many).toMatchObject({ verdict: 'inconclusive', inconclusive_codes: ['images_not_loaded'] });
    expect(await warningsOf(many.job_id)).toContainEqual(missingImages({ images: 4, missing: 2, missing_share: 0.5 }));

    page.images = { shown: 4, missing: 0 };
    page.font = 'failed';
    expect(await check(key, monitor.id)).toMatchObject({ verdict: 'inconclusive', inconclusive_codes: ['fonts_not_loaded'] });
  });

  it('pause the monitor once pause_after_inconclusive come in a row, saying why', async () => {
    const { key } = await server.account();
    const monitor = await monitorOf(key, { pause_after_inconclusive: 2 });
    page.drawn = 'blank';
    await check(key, monitor.id);
    const still = await (await server.v1('GET', `/monitors/${monitor.id}`, key)).json();
    expect(still).toMatchObject({ paused: false, paused_reason: null, pause_after_inconclusive: 2 });
    await check(key, monitor.id);
    const paused = await (await server.v1('GET', `/monitors/${monitor.id}`, key)).json();
    expect(paused).toMatchObject({ paused: true, next_run_at: null });
    expect(paused.paused_reason).toContain('2 inconclusive checks in a row (blank)');

    const resumed = await (await server.v1('PATCH', `/monitors/${monitor.id}`, key, { paused: false })).json();
    expect(resumed).toMatchObject({ paused: false, paused_reason: null });
  });

  it('pause a monitor after five in a row by default', async () => {
    const { key } = await server.account();
    const monitor = await monitorOf(key, {});
    page.drawn = 'blank';
    for (let i = 0; i < 4; i++) await check(key, monitor.id);
    expect((await (await server.v1('GET', `/monitors/${monitor.id}`, key)).json()).paused).toBe(false);
    await check(key, monitor.id);
    expect((await (await server.v1('GET', `/monitors/${monitor.id}`, key)).json()).paused).toBe(true);
  });
});

describe('changes said in words', () => {
  it('reports a price changed from 49 to 59 in the text change, in the check and in monitor.changed', async () => {
    const { key } = await server.account();
    page.clock = false;
    // Two digits are a few hundred pixels, under the default threshold.
    const monitor = await monitorOf(key, { mask_selectors: [], threshold: 0 });
    page.price = '49';
    await check(key, monitor.id);
    page.price = '59';
    const changed = await check(key, monitor.id);
    expect(changed).toMatchObject({ verdict: 'changed', pixels_only: false, text_change: { added: ['Price: 59 EUR'], removed: ['Price: 49 EUR'] } });
    const event = await until(() => eventsOf(monitor.id, 'monitor.changed')[0]);
    expect(event.data).toMatchObject({ verdict: 'changed', text_change: { added: ['Price: 59 EUR'], removed: ['Price: 49 EUR'] }, pixels_only: false });
    expect(Object.keys(event.data).slice(0, 2)).toEqual(['verdict', 'text_change']);
  });

  it('says pixels only when a picture on the page changed and its text did not', async () => {
    const { key } = await server.account();
    page.clock = false;
    const monitor = await monitorOf(key, { mask_selectors: [] });
    await check(key, monitor.id);
    page.box = '#e0a020';
    const changed = await check(key, monitor.id);
    expect(changed).toMatchObject({ verdict: 'changed', changed: true, text_change: null, pixels_only: true });
  });
});

describe('changes found where they are', () => {
  it('lists the region of a changed box, and leaves out a masked rectangle', async () => {
    const { key } = await server.account();
    const monitor = await monitorOf(key, {});
    const masked = await monitorOf(key, { mask_rects: [{ x: 90, y: 290, width: 220, height: 120 }], threshold: 0 });
    await check(key, monitor.id);
    await check(key, masked.id);
    page.box = '#e0a020';
    const changed = await check(key, monitor.id);
    expect(changed.regions).toEqual([{ kind: 'changed', before: { x: 100, y: 300, width: 200, height: 100 }, after: { x: 100, y: 300, width: 200, height: 100 } }]);
    expect(await check(key, masked.id)).toMatchObject({ verdict: 'unchanged', regions: [] });
    const shown = await (await server.v1('GET', `/monitors/${masked.id}`, key)).json();
    expect(shown.mask_rects).toEqual([{ x: 90, y: 290, width: 220, height: 120 }]);
  });

  it('places regions and rectangle masks in CSS px of a picture resized by image_width', async () => {
    const { key } = await server.account();
    // A 1920 px wide desktop page in a 960 px picture: half an image pixel per CSS pixel.
    const resized = await monitorOf(key, { image_width: 960 });
    const masked = await monitorOf(key, { image_width: 960, mask_rects: [{ x: 90, y: 290, width: 220, height: 120 }], threshold: 0 });
    await check(key, resized.id);
    await check(key, masked.id);
    page.box = '#20a0e0';
    const changed = await check(key, resized.id);
    expect(changed.picture_scale).toBe(0.5);
    expect(changed.regions).toEqual([{ kind: 'changed', before: { x: 100, y: 300, width: 200, height: 100 }, after: { x: 100, y: 300, width: 200, height: 100 } }]);
    expect(await check(key, masked.id)).toMatchObject({ verdict: 'unchanged', regions: [] });
  });
});

describe('masks proposed from the first baseline', () => {
  it('captures the first baseline again and proposes a mask over the live clock, which accept makes a rectangle mask', async () => {
    const { key } = await server.account();
    const monitor = await monitorOf(key, { mask_selectors: [], propose_masks: true, threshold: 0 });
    expect(monitor).toMatchObject({ propose_masks: true, proposed_masks: [] });
    const first = await check(key, monitor.id);
    expect(first.verdict).toBe('first');
    const shown = await until(async () => {
      const m = await (await server.v1('GET', `/monitors/${monitor.id}`, key)).json();
      return m.proposed_masks.length ? m : undefined;
    });
    // The clock's digits are in a 240 × 60 box at (600, 300): one mask over them (8 px of padding), and none elsewhere.
    expect(shown.proposed_masks).toHaveLength(1);
    const [mask] = shown.proposed_masks;
    expect(mask.x).toBeGreaterThanOrEqual(592);
    expect(mask.y).toBeGreaterThanOrEqual(292);
    expect(mask.x + mask.width).toBeLessThanOrEqual(848);
    expect(mask.y + mask.height).toBeLessThanOrEqual(368);
    // The second capture sends nothing, and its check says what it was.
    expect(eventsOf(monitor.id, 'monitor.changed')).toEqual([]);
    const { checks } = await (await server.v1('GET', `/monitors/${monitor.id}/checks`, key)).json();
    expect(checks.map((c: { mask_probe: boolean }) => c.mask_probe)).toEqual([true, false]);

    const accepted = await (await server.v1('POST', `/monitors/${monitor.id}/proposed-masks/accept`, key)).json();
    expect(accepted).toMatchObject({ proposed_masks: [], mask_rects: [mask] });
    expect(await check(key, monitor.id)).toMatchObject({ verdict: 'unchanged', difference: 0 });
  });
});
