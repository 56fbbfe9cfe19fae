import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from '../monitors/changing-page.js';

// The Monitors page in real Chromium: create, run, the list, a monitor's timeline, the three
// comparisons, pause and edit. Its pictures go to test-artifacts/panel/, and with PANEL_DOCS=1 to
// docs/img/ (run `npm run build` first: the test serves dist/renderer).

const CHROMIUM = '/usr/lib/chromium/chromium';
const ARTIFACTS = path.resolve('test-artifacts/panel');
const DOCS_IMG = path.resolve('docs/img');
const COPY_TO_DOCS = process.env.PANEL_DOCS === '1';

async function shoot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: 'disabled', style: '.toasts { display: none !important; }' });
  if (COPY_TO_DOCS) await fsp.copyFile(file, path.join(DOCS_IMG, `panel-${name}.png`));
}

describe('the Monitors page', () => {
  let server: TestServer;
  let watched: ChangingPage;
  let browser: Browser;
  let page: Page;
  let monitorId = '';

  const checksOf = async (): Promise<Array<{ job_id: string; status: string }>> => (await server.admin('GET', `/monitors/${monitorId}/checks`)).body.checks;
  const settled = async (count: number) =>
    expect.poll(async () => (await checksOf()).filter((c) => c.status !== 'pending').length, { timeout: 60_000, interval: 250 }).toBe(count);

  beforeAll(async () => {
    if (!fs.existsSync(path.resolve('dist/renderer/index.html'))) throw new Error('build the panel first: npm run build');
    await fsp.mkdir(ARTIFACTS, { recursive: true });
    watched = await startChangingPage();
    server = await startTestServer({ ratePerSecond: 1000 });
    await server.account();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: BASE_ARGS, timeout: 30_000 });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    await page.goto(server.srv.adminUrl);
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    for (const close of [() => browser?.close(), () => server?.close(), () => watched?.close()]) {
      try {
        await close();
      } catch {
        // already gone
      }
    }
  });

  it('creates a monitor from the form', async () => {
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Monitors' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1, name: 'Monitors' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'New monitor' }).click();
    const dialog = page.getByRole('dialog', { name: 'New monitor' });
    await dialog.getByLabel('Page address').fill(watched.url);
    await dialog.getByLabel('Name').fill('Pricing page');
    await dialog.getByLabel('Every').fill('60');
    await dialog.getByLabel('Masked elements').fill('#clock');
    await dialog.getByRole('button', { name: 'Create monitor' }).click();
    await expect.poll(() => page.getByRole('link', { name: 'Pricing page' }).isVisible()).toBe(true);
    const { monitors } = (await server.admin('GET', '/monitors')).body;
    expect(monitors).toHaveLength(1);
    expect(monitors[0]).toMatchObject({ name: 'Pricing page', url: watched.url, schedule: { every_minutes: 60 }, mask_selectors: ['#clock'] });
    monitorId = monitors[0].id;
    // A new monitor captures its first baseline twice to propose masks; the checks below count one each.
    expect((await server.admin('PATCH', `/monitors/${monitorId}`, { propose_masks: false })).status).toBe(200);
  });

  it('runs checks now and shows the last one as changed in the list', async () => {
    const row = page.getByRole('row', { name: /Pricing page/ });
    watched.box = '#2060c0';
    await row.getByRole('button', { name: 'Run now' }).click();
    await settled(1);
    watched.box = '#e0a020';
    await row.getByRole('button', { name: 'Run now' }).click();
    await settled(2);
    await expect.poll(() => row.getByText('Changed').isVisible(), { timeout: 15_000 }).toBe(true);
    await shoot(page, 'monitors');
  });

  it("shows a monitor's timeline and compares its two checks side by side, overlaid and as a diff", async () => {
    await page.getByRole('link', { name: 'Pricing page' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Checks of Pricing page' }).isVisible()).toBe(true);
    await expect.poll(() => page.locator('.timeline-item').count()).toBe(2);
    const compare = page.locator('.monitor-compare');
    await expect.poll(() => compare.locator('.compare-side img').count()).toBe(2);
    await expect.poll(() => compare.locator('.compare-side img').evaluateAll((imgs) => imgs.every((i) => (i as HTMLImageElement).naturalWidth === 1920))).toBe(true);
    await shoot(page, 'monitor-timeline');

    await compare.getByRole('button', { name: 'Overlay' }).click();
    await compare.getByRole('slider').fill('30');
    expect(await compare.locator('.overlay-top').getAttribute('style')).toContain('inset(0px 0px 0px 30%)');
    await shoot(page, 'monitor-overlay');

    await compare.getByRole('button', { name: 'Diff' }).click();
    const diff = compare.getByRole('img', { name: /Changed pixels/ });
    await expect.poll(() => diff.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(1920);
    expect(await compare.getByText(/% of the pixels differ/).isVisible()).toBe(true);
    await shoot(page, 'monitor-diff');
  });

  it('pauses and edits a monitor', async () => {
    const row = page.getByRole('row', { name: /Pricing page/ });
    await row.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => row.getByText('Paused').isVisible()).toBe(true);
    expect((await server.admin('GET', '/monitors')).body.monitors[0]).toMatchObject({ paused: true, next_run_at: null });
    await row.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit monitor' });
    await dialog.getByLabel('Name').fill('Pricing (EU)');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('link', { name: 'Pricing (EU)' }).isVisible()).toBe(true);
    expect((await server.admin('GET', '/monitors')).body.monitors[0]).toMatchObject({ name: 'Pricing (EU)', paused: true });
  });
});
