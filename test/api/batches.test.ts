import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { pngSize } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { readZip } from '../helpers/zip-entries.js';

// POST /v1/batches on a real server with real Chromium: local pages, the NeDB store
// (the PostgreSQL store: test/store/batch-conformance.test.ts).

let server: TestServer;
let pages: http.Server;
let pagesUrl: string;

beforeAll(async () => {
  pages = http.createServer((req, res) => {
    const n = Number(/^\/page\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><title>Page ${n}</title><body style="margin:0;background:hsl(${(n * 37) % 360},70%,50%)"><h1>Page ${n}</h1></body>`);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  server = await startTestServer({ ratePerSecond: 1000, concurrency: 2, browsers: 1 });
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => pages?.close(resolve));
});

/** Denied by the egress policy (the test server allows 127.0.0.1 only): such a job fails as soon as it runs. */
const DENIED = 'http://127.0.0.2:1/';

const post = (key: string, body: unknown, headers: Record<string, string> = {}) => server.v1('POST', '/batches', key, body, headers);
const callsToday = async (key: string) => (await (await server.v1('GET', '/usage', key)).json()).calls_today as number;

/** Polls a batch until it has ended. */
async function waitForBatch(key: string, id: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await (await server.v1('GET', `/batches/${id}`, key)).json();
    if (body.status === 'completed' || body.status === 'cancelled') return body;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${JSON.stringify(body.counts)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('POST /v1/batches', () => {
  it('captures 50 local pages, two of them with their own options, and lists every job by its index', async () => {
    const { key } = await server.account();
    const items = Array.from({ length: 50 }, (_, i) => ({ url: `${pagesUrl}/page/${i}` }));
    items[7] = { ...items[7], format: 'jpeg', quality: 60 } as (typeof items)[number];
    items[31] = { ...items[31], width: 400, height: 300 } as (typeof items)[number];
    const res = await post(key, { items, width: 320, height: 240 });
    expect(res.status).toBe(201);
    const created = await res.json();
    expect(created).toMatchObject({ batch_id: expect.stringMatching(/^batch_[0-9a-f]{24}$/), status: 'pending', total: 50 });
    expect(created.status_url).toBe(`${server.url}/v1/batches/${created.batch_id}`);

    const ended = await waitForBatch(key, created.batch_id);
    expect(ended).toMatchObject({ status: 'completed', total: 50, counts: { pending: 0, processing: 0, completed: 50, failed: 0 }, progress: 1, estimated_seconds_left: 0 });
    expect(ended.archive_url).toBe(`${server.url}/v1/batches/${created.batch_id}/archive`);
    expect(ended.jobs.map((j: { index: number }) => j.index)).toEqual(items.map((_, i) => i));
    expect(ended.jobs.map((j: { url: string }) => j.url)).toEqual(items.map((item) => item.url));
    expect(await callsToday(key)).toBe(50);

    const job = async (i: number) => (await server.v1('GET', `/screenshot/${ended.jobs[i].job_id}`, key)).json();
    expect((await job(7)).screenshot_url).toMatch(/\.jpg$/);
    const picture = async (i: number) => Buffer.from(await (await fetch((await job(i)).screenshot_url)).arrayBuffer());
    expect(pngSize(await picture(31))).toEqual({ width: 400, height: 300 });
    expect(pngSize(await picture(30))).toEqual({ width: 320, height: 240 });

    const archive = await server.v1('GET', `/batches/${created.batch_id}/archive`, key);
    expect(archive.status).toBe(200);
    expect(archive.headers.get('content-type')).toBe('application/zip');
    const entries = await readZip(Buffer.from(await archive.arrayBuffer()));
    const images = [...entries.keys()].filter((name) => !name.startsWith('manifest.'));
    expect(images).toHaveLength(50);
    expect(images[0]).toBe(`0000-127.0.0.1-${new URL(pagesUrl).port}-page-0.png`);
    expect(images[7]).toMatch(/^0007-.*\.jpg$/);
    const manifest = JSON.parse(entries.get('manifest.json')!.toString());
    expect(manifest).toMatchObject({ batch_id: created.batch_id, status: 'completed', total: 50 });
    expect(manifest.items.map((row: { file: string }) => row.file)).toEqual(images);
    for (const row of manifest.items) {
      expect(row).toMatchObject({ url: items[row.index].url, job_id: ended.jobs[row.index].job_id, status: 'completed', error: null });
      expect(entries.get(row.file)!.equals(await picture(row.index))).toBe(true);
    }
    const csv = entries.get('manifest.csv')!.toString().trim().split('\r\n');
    expect(csv[0]).toBe('index,url,job_id,status,file,warnings,error');
    expect(csv).toHaveLength(51);
    expect(csv[8]).toBe(`7,${items[7].url},${ended.jobs[7].job_id},completed,${images[7]},,`);

    const page2 = await (await server.v1('GET', `/batches/${created.batch_id}?per_page=20&page=2`, key)).json();
    expect(page2.jobs.map((j: { index: number }) => j.index)).toEqual(Array.from({ length: 20 }, (_, i) => 20 + i));
    expect(page2.next_page).toBe(`${server.url}/v1/batches/${created.batch_id}?page=3&per_page=20`);
  });

  it('answers 400 naming the index and field of a bad item, queueing and counting nothing', async () => {
    const { key } = await server.account();
    const res = await post(key, { items: [{ url: `${pagesUrl}/page/1` }, { url: `${pagesUrl}/page/2` }, { url: 'ftp://example.test/' }], full_page: true });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toBe('Bad request');
    expect(body.message).toBe('items[2].url: url must use the scheme http:// or https://');
    expect(await callsToday(key)).toBe(0);
    const tooMany = await post(key, { items: Array.from({ length: 1001 }, () => ({ url: `${pagesUrl}/page/1` })) });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).message).toMatch(/items/);
  });

  it('answers a retry with the same Idempotency-Key with the same batch, counting its calls once', async () => {
    const { key } = await server.account();
    const body = { items: [{ url: DENIED }, { url: `${DENIED}two` }] };
    const first = await post(key, body, { 'idempotency-key': 'batch-order-1' });
    expect(first.status).toBe(201);
    const created = await first.json();
    const retry = await post(key, body, { 'idempotency-key': 'batch-order-1' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(created);
    expect(await callsToday(key)).toBe(2);
  });

  it('refuses a batch that would pass the daily limit whole, with 429, counting none of it', async () => {
    const { key } = await server.account({ daily_limit: 5 });
    const res = await post(key, { items: Array.from({ length: 6 }, (_, i) => ({ url: `${DENIED}${i}` })) });
    expect(res.status).toBe(429);
    expect((await res.json()).error).toBe('Rate limit exceeded');
    expect(await callsToday(key)).toBe(0);
    expect((await post(key, { items: Array.from({ length: 5 }, (_, i) => ({ url: `${DENIED}${i}` })) })).status).toBe(201);
  });

  it("answers 404 for another account's batch, to GET and DELETE alike", async () => {
    const owner = await server.account();
    const other = await server.account();
    const { batch_id: id } = await (await post(owner.key, { items: [{ url: DENIED }] })).json();
    expect((await server.v1('GET', `/batches/${id}`, owner.key)).status).toBe(200);
    for (const method of ['GET', 'DELETE']) {
      const res = await server.v1(method, `/batches/${id}`, other.key);
      expect(res.status).toBe(404);
      expect((await res.json()).error).toBe('Not found');
    }
  });

  it('cancels what has not started: the items not yet fed to the queue never run', async () => {
    const { key } = await server.account();
    server.srv.services.queue.pause();
    let id: string;
    try {
      ({ batch_id: id } = await (await post(key, { items: Array.from({ length: 30 }, (_, i) => ({ url: `${DENIED}${i}` })) })).json());
      const cancelled = await server.v1('DELETE', `/batches/${id}`, key);
      expect(cancelled.status).toBe(200);
      expect((await cancelled.json()).status).toBe('cancelled');
    } finally {
      server.srv.services.queue.resume();
    }
    await expect.poll(async () => (await (await server.v1('GET', `/batches/${id}`, key)).json()).counts.failed).toBe(4);
    const after = await (await server.v1('GET', `/batches/${id}`, key)).json();
    expect(after).toMatchObject({ status: 'cancelled', counts: { pending: 26, processing: 0, completed: 0, failed: 4 } });
    expect(after.jobs).toHaveLength(4);
    const manifest = JSON.parse((await readZip(Buffer.from(await (await server.v1('GET', `/batches/${id}/archive`, key)).arrayBuffer()))).get('manifest.json')!.toString());
    expect(manifest.items).toHaveLength(30);
    expect(manifest.items[3]).toMatchObject({ index: 3, status: 'failed', file: null, error: expect.any(String) });
    expect(manifest.items[4]).toEqual({ index: 4, url: null, job_id: null, status: 'not_run', file: null, warnings: [], error: null });
  });
});
