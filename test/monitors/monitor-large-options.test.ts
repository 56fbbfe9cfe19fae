import fs from 'node:fs/promises';
import path from 'node:path';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { forFile } from '../helpers/for-file.js';
import { movableClock } from '../helpers/movable-clock.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { startChangingPage } from './changing-page.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';
import { restoredMonitor } from './restored-monitor.js';

// A monitor's capture options a customer can make large (64 KB of styles and of scripts, 100
// mask selectors of 1 KB) on a real server: kept apart from monitors.db's lines, as its secrets.

const MINUTE = 60_000;
const POLL_MS = 50;
const KB = 1024;

/** 64 KB of CSS painting the watched page's box red. */
const styles = `#box{background:#ff0000 !important}/*${'s'.repeat(64 * KB - 64)}*/`;
/** 64 KB of script adding a green square at (100, 500). */
const scripts =
  `/*${'j'.repeat(64 * KB - 400)}*/` +
  "const d=document.createElement('div');d.id='added';d.style.cssText='position:absolute;left:100px;top:500px;width:100px;height:100px;background:#00ff00';document.body.appendChild(d);";
/** 100 selectors of about 1 KB, each matching the page's clock. */
const maskSelectors = Array.from({ length: 100 }, (_, i) => `#clock:not(.${'m'.repeat(1000)}${i})`);

const page = forFile(startChangingPage, (p) => p.close());

/** The colour of one pixel of a picture, as [r, g, b]. */
async function pixel(png: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * info.channels;
  return [data[i], data[i + 1], data[i + 2]];
}

describe('a monitor with 64 KB of styles and of scripts, run every minute', () => {
  const clock = movableClock();
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer({ ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    ({ key } = await server.account());
  });
  afterAll(async () => {
    await server?.close();
  });

  it('appends lines of under 2 KB to monitors.db at each of 20 scheduled runs and 20 PATCHes of its name, and each check has its styles, scripts and masks applied', async () => {
    const created = await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 1 }, styles, scripts, mask_selectors: maskSelectors, ...NO_PROPOSED_MASKS });
    expect(created.status).toBe(201);
    const { id } = await created.json();
    // NeDB appends the whole record as one line at each change (a fold by growth bounds the file, not what is written).
    const monitorsDb = path.join(server.dataDir, 'monitors.db');
    const lines: number[] = [];
    const lastLine = async () => lines.push(Buffer.byteLength((await fs.readFile(monitorsDb, 'utf8')).trimEnd().split('\n').at(-1)!));
    await lastLine();

    const nextRun = async () => (await (await server.v1('GET', `/monitors/${id}`, key)).json()).next_run_at;
    for (let i = 0; i < 20; i++) {
      const due = await nextRun();
      clock.advance(MINUTE);
      await expect.poll(nextRun, { timeout: 10_000 }).not.toBe(due);
      await lastLine();
      expect((await server.v1('PATCH', `/monitors/${id}`, key, { name: `n${i}` })).status).toBe(200);
      await lastLine();
    }
    const settled = async () => {
      const { checks } = await (await server.v1('GET', `/monitors/${id}/checks?limit=50`, key)).json();
      return (checks as Array<{ status: string }>).filter((check) => check.status !== 'pending').length;
    };
    await expect.poll(settled, { timeout: 150_000, interval: 500 }).toBe(20);
    // Each line used to carry the whole record: 233 KB, 9.3 MB over these 40 changes.
    expect(Math.max(...lines)).toBeLessThan(2 * KB);

    const { checks } = await (await server.v1('GET', `/monitors/${id}/checks?limit=50`, key)).json();
    const completed = checks.filter((check: { status: string }) => check.status === 'completed');
    expect(completed.length, JSON.stringify(checks.find((check: { status: string }) => check.status !== 'completed'))).toBe(20);
    const png = Buffer.from(await (await fetch(completed[0].screenshot_url)).arrayBuffer());
    expect(await pixel(png, 200, 350)).toEqual([255, 0, 0]); // the box, red by the styles
    expect(await pixel(png, 150, 550)).toEqual([0, 255, 0]); // the square the scripts added
    expect(await pixel(png, 700, 330)).toEqual([128, 128, 128]); // the clock, masked

    // The customer's monitor shows the options as given.
    const shown = await (await server.v1('GET', `/monitors/${id}`, key)).json();
    expect(shown.capture).toMatchObject({ url: page.url, styles, scripts });
    expect(shown.mask_selectors).toEqual(maskSelectors);
    expect(shown.secret_fields).toEqual([]);
    const listed = (await server.admin('GET', '/monitors')).body.monitors.find((m: { id: string }) => m.id === id);
    expect(listed.capture).toMatchObject({ styles, scripts });
  }, 240_000);
});

describe('a monitor with large options restored from a backup, which keeps none of them', () => {
  it('fails its checks naming the options no longer kept, until they are given again', async () => {
    const clock = movableClock();
    const { target, key, monitor } = await restoredMonitor('sa-monitor-options-backup-', { url: page.url, schedule: { every_minutes: 1 }, styles, scripts, ...NO_PROPOSED_MASKS });

    const restored = await startTestServer({ dataDir: target, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      const nextRun = async () => (await (await restored.v1('GET', `/monitors/${monitor.id}`, key)).json()).next_run_at;
      const due = await nextRun();
      clock.advance(MINUTE);
      await expect.poll(nextRun, { timeout: 10_000 }).not.toBe(due);
      // The occurrence is claimed (next_run_at moves on) before its check is stored.
      const firstCheck = async () => (await (await restored.v1('GET', `/monitors/${monitor.id}/checks`, key)).json()).checks[0];
      await expect.poll(firstCheck).toBeDefined();
      const failed = await firstCheck();
      expect(failed).toMatchObject({ status: 'failed', job_id: null });
      expect(failed.error).toMatch(/^The monitor's styles, scripts are no longer kept \(a data directory restored from a backup holds none\); give them again with PATCH/);

      const refused = await restored.v1('POST', `/monitors/${monitor.id}/run`, key);
      expect(refused.status).toBe(400);
      expect((await refused.json()).message).toContain('styles, scripts are no longer kept');
      const partial = await restored.v1('PATCH', `/monitors/${monitor.id}`, key, { styles });
      expect(partial.status).toBe(400);
      expect((await partial.json()).message).toMatch(/The monitor's scripts are no longer kept .*give them again with this change/);

      expect((await restored.v1('PATCH', `/monitors/${monitor.id}`, key, { styles, scripts })).status).toBe(200);
      const run = await restored.v1('POST', `/monitors/${monitor.id}/run`, key);
      expect(run.status).toBe(201);
      expect((await waitForJob(restored, key, (await run.json()).job_id)).status).toBe('completed');
    } finally {
      await restored.close();
    }
  }, 120_000);
});

describe('a PATCH of a monitor', () => {
  it('keeps the fields it does not give: a paused monitor stays paused, with its threshold and mask selectors', async () => {
    const server = await startTestServer({ ratePerSecond: 1000 });
    try {
      const { key } = await server.account();
      const body = { url: page.url, schedule: { every_minutes: 60 }, paused: true, threshold: 0.5, mask_selectors: ['#clock'], baseline: 'pinned' };
      const { id } = await (await server.v1('POST', '/monitors', key, body)).json();
      const patched = await server.v1('PATCH', `/monitors/${id}`, key, { name: 'renamed' });
      expect(patched.status).toBe(200);
      expect(await patched.json()).toMatchObject({ name: 'renamed', paused: true, next_run_at: null, threshold: 0.5, mask_selectors: ['#clock'], baseline: 'pinned' });
    } finally {
      await server.close();
    }
  });
});
