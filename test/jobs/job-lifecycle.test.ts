import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer,waitForJob } from '../helpers/test-server.js';

let fixtures: FixtureServer;
let server: TestServer;
let key: string;
let offset = 0;
const clock = { now: () => Date.now() + offset };

beforeAll(async () => {
  fixtures = await startFixtureServer();
  // These tests poll tightly; the per-second limit has its own tests.
  server = await startTestServer({ ratePerSecond: 10_000 }, { clock });
  ({ key } = await server.account({ daily_limit: 10_000 }));
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

const post = (body: Record<string, unknown>) => server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, ...body });

describe('job lifecycle', () => {
  it('persists every transition, ending at progress 100 with the timings recorded', async () => {
    const seen = new Set<string>();
    const created = await (await post({})).json();
    const deadline = Date.now() + 30_000;
    let job: any;
    do {
      job = await (await server.v1('GET', `/screenshot/${created.job_id}`, key)).json();
      seen.add(`${job.status}:${job.progress}`);
      // What the API reported was on disk first: the store is never behind the answer.
      const stored = await server.srv.services.stores.jobs.get(created.job_id);
      const rank = ['pending', 'processing', 'completed'];
      expect(rank.indexOf(stored!.status)).toBeGreaterThanOrEqual(rank.indexOf(job.status));
    } while (job.status !== 'completed' && Date.now() < deadline);
    expect(job.progress).toBe(100);
    for (const state of seen) expect(state).toMatch(/^(pending:0|processing:(10|40|70|90)|completed:100)$/);
    const stored = await server.srv.services.stores.jobs.get(created.job_id);
    expect(stored!.duration_ms).toBeGreaterThan(0);
    expect(stored!.attempts).toBe(1);
  });

  it('answers 503 with Retry-After when the queue is full, counting nothing', async () => {
    server.srv.services.queue.pause();
    await server.admin('PUT', '/settings', { queue_limit: 2 });
    try {
      expect((await post({})).status).toBe(201);
      const full = await post({ devices: ['desktop', 'mobile'] });
      expect(full.status).toBe(503);
      expect(await full.json()).toMatchObject({ error: 'Service unavailable', message: expect.stringMatching(/queue is full/) });
      expect(Number(full.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await post({})).status).toBe(201);
    } finally {
      await server.admin('PUT', '/settings', { queue_limit: 500 });
      server.srv.services.queue.resume();
    }
  });

  it('estimates longer waits for jobs further back in the queue', async () => {
    server.srv.services.queue.pause();
    try {
      const first = await (await post({})).json();
      for (let i = 0; i < 6; i++) await post({});
      const later = await (await post({})).json();
      expect(later.estimated_time_seconds).toBeGreaterThan(first.estimated_time_seconds);
    } finally {
      server.srv.services.queue.resume();
    }
  });

  it('fails a job aimed at a loopback address the egress policy denies, naming the reason', async () => {
    const created = await (await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.2:1/' })).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job.status).toBe('failed');
    expect(job.error).toBe('blocked by egress policy: 127.0.0.2 is a loopback address');
  });

  it('fails a job whose page never answers within the navigation time-out, and runs the next one', async () => {
    await server.admin('PUT', '/settings', { navigation_timeout_ms: 2000 });
    try {
      const hung = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/hang` })).json();
      const next = await (await post({})).json();
      const job = await waitForJob(server, key, hung.job_id);
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(/Timed out after 2 s loading/);
      expect((await waitForJob(server, key, next.job_id)).status).toBe('completed');
    } finally {
      await server.admin('PUT', '/settings', { navigation_timeout_ms: 30000 });
    }
  });

  it('removes files after the retention period and says so on the job', async () => {
    const created = await (await post({})).json();
    const job = await waitForJob(server, key, created.job_id);
    expect((await fetch(job.screenshot_url)).status).toBe(200);
    const imageFile = path.join(server.dataDir, 'files', job.screenshot_url.split('/').pop());
    await fs.access(imageFile);
    offset = 8 * 86_400_000;
    try {
      expect(await server.srv.services.retention.sweep()).toBeGreaterThan(0);
    } finally {
      offset = 0;
    }
    const after = await (await server.v1('GET', `/screenshot/${created.job_id}?include_source=1`, key)).json();
    expect(after).toMatchObject({ status: 'completed', expired: true, has_page_source: false });
    expect(after).not.toHaveProperty('page_source');
    expect((await fetch(job.screenshot_url)).status).toBe(404);
    await expect(fs.access(imageFile)).rejects.toThrow();
  });
});
