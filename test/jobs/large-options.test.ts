import fs from 'node:fs/promises';
import path from 'node:path';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RECORD_OPTIONS_BYTES } from '../../server/store/records/job-options.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

let fixtures: FixtureServer;

beforeAll(async () => {
  fixtures = await startFixtureServer();
});
afterAll(async () => {
  await fixtures?.close();
});

/**
 * Options near the largest a request may give (~220 KB): styles turning the red block of
 * /opt/colors.html blue, scripts adding a green block beside it, and 100 selectors of 1 KB.
 */
const large = {
  styles: `#red { background: rgb(0, 0, 255) !important } /* ${'s'.repeat(60_000)} */`,
  scripts: `/* ${'j'.repeat(60_000)} */ document.body.insertAdjacentHTML('beforeend', '<div style="position:absolute;left:300px;top:0;width:100px;height:100px;background:#0f0"></div>')`,
  hide_selectors: Array.from({ length: 100 }, (_, i) => `.absent-${i}-${'h'.repeat(1000)}`),
};
const requestBody = () => ({ url: `${fixtures.url}/opt/colors.html`, delay: 100, dark_mode: true, ...large });

/** The colour at (x, y) of a job's image, as [r, g, b]. */
async function pixel(screenshotUrl: string, x: number, y: number): Promise<number[]> {
  const image = Buffer.from(await (await fetch(screenshotUrl)).arrayBuffer());
  return [...(await sharp(image).extract({ left: x, top: y, width: 1, height: 1 }).removeAlpha().raw().toBuffer())];
}

/** The job captured with its styles and scripts: the red block blue, the scripts' block green. */
async function expectOptionsApplied(job: { status: string; screenshot_url: string }): Promise<void> {
  expect(job.status).toBe('completed');
  expect(await pixel(job.screenshot_url, 50, 50)).toEqual([0, 0, 255]);
  expect(await pixel(job.screenshot_url, 350, 50)).toEqual([0, 255, 0]);
}

describe('large options of a job', () => {
  let server: TestServer;
  afterAll(async () => {
    await server?.close();
  });

  it('are kept neither in the stored records nor in jobs.db, and the jobs still capture with them', async () => {
    server = await startTestServer({ ratePerSecond: 10_000 });
    const { key } = await server.account({ daily_limit: 10_000 });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await server.v1('POST', '/screenshot', key, requestBody());
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { job_id: string }).job_id);
    }
    for (const id of ids) await expectOptionsApplied(await waitForJob(server, key, id));

    // The records the store holds (NeDB: in memory, for the whole history period) and the file's every line.
    const stores = server.srv.services.stores;
    for (const id of ids) expect(JSON.stringify(await stores.jobs.get(id)).length).toBeLessThan(4 * RECORD_OPTIONS_BYTES);
    const jobsDb = await fs.readFile(path.join(server.dataDir, 'jobs.db'), 'utf8');
    expect(jobsDb.length).toBeLessThan(ids.length * 16 * RECORD_OPTIONS_BYTES);
    expect(jobsDb).not.toContain('s'.repeat(1000));
    expect(jobsDb).not.toContain('absent-0-');
    // Sealed apart until the end, and gone with it.
    expect(await fs.readdir(path.join(server.dataDir, 'job-secrets'))).toEqual([]);

    // The admin API shows the small options, and names the ones that were not kept.
    const admin = await server.admin('GET', `/jobs/${ids[0]}`);
    expect(admin.body.options).toEqual({ delay: 100, dark_mode: true, sealed_options: ['hide_selectors', 'styles', 'scripts'] });
  });

  it('keeps small ones in the record, shown as they were asked', async () => {
    const { key } = await server.account({ daily_limit: 10_000 });
    const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/opt/colors.html`, hide_selectors: ['#green'], styles: '#red { background: rgb(0, 0, 255) !important }' });
    const job = await waitForJob(server, key, ((await res.json()) as { job_id: string }).job_id);
    expect(job.status).toBe('completed');
    expect(await pixel(job.screenshot_url, 50, 50)).toEqual([0, 0, 255]);
    expect((await server.admin('GET', `/jobs/${job.job_id}`)).body.options).toEqual({
      hide_selectors: ['#green'],
      styles: '#red { background: rgb(0, 0, 255) !important }',
    });
  });

  it('are applied to a job that waited through a restart', async () => {
    const first = await startTestServer();
    const { key } = await first.account({ daily_limit: 10_000 });
    first.srv.services.queue.pause();
    const res = await first.v1('POST', '/screenshot', key, requestBody());
    expect(res.status).toBe(201);
    const { job_id: id } = (await res.json()) as { job_id: string };
    // A clean stop: the job stays waiting on disk, its large options sealed apart.
    await first.srv.close();
    const second = await startTestServer({ dataDir: first.dataDir });
    try {
      expect((await second.srv.services.stores.jobs.get(id))?.options).toEqual({ delayMs: 100, darkMode: true });
      await expectOptionsApplied(await waitForJob(second, key, id));
    } finally {
      await second.close();
    }
  });
});
