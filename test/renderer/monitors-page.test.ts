import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from '../monitors/changing-page.js';

// The Monitors page in real Chromium: create, run, the list, a monitor's timeline, the three
// comparisons, pause and edit; what a check found (inconclusive, its text change first), masks
// proposed to accept, a monitor that paused itself, rectangle masks and notifications in the
// form, and the SMTP server in the settings. Its pictures go to test-artifacts/panel/, and with PANEL_DOCS=1 to
// docs/img/ (run `npm run build` first: the test serves dist/renderer).

const CHROMIUM = '/usr/lib/chromium/chromium';
const ARTIFACTS = path.resolve('test-artifacts/panel');
const DOCS_IMG = path.resolve('docs/img');
const COPY_TO_DOCS = process.env.PANEL_DOCS === '1';

/** A picture of the whole page, or of one part of it (a dialog, a section). */
async function shoot(what: Page | Locator, name: string): Promise<void> {
  const file = path.join(ARTIFACTS, `${name}.png`);
  const style = '.toasts { display: none !important; }';
  if ('goto' in what) {
    await what.evaluate(() => window.scrollTo(0, 0));
    await what.screenshot({ path: file, fullPage: true, animations: 'disabled', style });
  } else {
    await what.screenshot({ path: file, animations: 'disabled', style });
  }
  if (COPY_TO_DOCS) await fsp.copyFile(file, path.join(DOCS_IMG, `panel-${name}.png`));
}

describe('the Monitors page', () => {
  let server: TestServer;
  let watched: ChangingPage;
  let browser: Browser;
  let page: Page;
  let monitorId = '';
  let accountId = '';

  const checksOf = async (): Promise<Array<{ job_id: string; status: string }>> => (await server.admin('GET', `/monitors/${monitorId}/checks`)).body.checks;
  const settled = async (count: number) =>
    expect.poll(async () => (await checksOf()).filter((c) => c.status !== 'pending').length, { timeout: 60_000, interval: 250 }).toBe(count);

  /** A monitor of `watched` made through the admin API, for the account, checked only when run. */
  const monitorOf = async (body: Record<string, unknown>): Promise<{ id: string }> => {
    const created = await server.admin('POST', '/monitors', { account_id: accountId, url: watched.url, schedule: { every_minutes: 600 }, propose_masks: false, ...body });
    expect(created.status).toBe(201);
    return created.body;
  };
  /** Runs a check of the monitor now and waits until `count` of its checks are settled. */
  const runChecked = async (id: string, count: number) => {
    expect((await server.admin('POST', `/monitors/${id}/run`)).status).toBe(201);
    await expect
      .poll(async () => (await server.admin('GET', `/monitors/${id}/checks`)).body.checks.filter((c: { status: string }) => c.status !== 'pending').length, { timeout: 30_000, interval: 200 })
      .toBe(count);
  };
  const monitorNamed = async (name: string) => (await server.admin('GET', '/monitors')).body.monitors.find((m: { name: string }) => m.name === name);
  const openMonitors = async () => {
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Monitors' }).click();
    await page.getByRole('heading', { level: 1, name: 'Monitors' }).waitFor();
  };

  beforeAll(async () => {
    if (!fs.existsSync(path.resolve('dist/renderer/index.html'))) throw new Error('build the panel first: npm run build');
    await fsp.mkdir(ARTIFACTS, { recursive: true });
    watched = await startChangingPage();
    server = await startTestServer({ ratePerSecond: 1000 });
    ({ accountId } = await server.account());
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
    // On by default; off here, so the first picture is not taken twice and the timeline holds the two checks run below.
    await dialog.getByLabel('Propose masks from the first picture').uncheck();
    await dialog.getByRole('button', { name: 'Create monitor' }).click();
    await expect.poll(() => page.getByRole('link', { name: 'Pricing page' }).isVisible()).toBe(true);
    const { monitors } = (await server.admin('GET', '/monitors')).body;
    expect(monitors).toHaveLength(1);
    expect(monitors[0]).toMatchObject({ name: 'Pricing page', url: watched.url, schedule: { every_minutes: 60 }, mask_selectors: ['#clock'], propose_masks: false });
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
    expect(await compare.locator('.compare-diff').getByText(/% of the pixels differ/).isVisible()).toBe(true);
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
  it('shows a check whose picture cannot be trusted as Inconclusive, with the warnings that decided it, and the monitor it paused with its reason', async () => {
    const monitor = await monitorOf({ name: 'Blank page', mask_selectors: ['#clock'], pause_after_inconclusive: 1 });
    watched.drawn = 'blank';
    try {
      await runChecked(monitor.id, 1);
    } finally {
      watched.drawn = 'whole';
    }
    await openMonitors();
    const row = page.getByRole('row', { name: /Blank page/ });
    await expect.poll(() => row.locator('.paused-reason').textContent(), { timeout: 10_000 }).toContain('An inconclusive check (blank)');
    expect(await row.locator('.paused-reason').textContent()).toContain('blank');
    expect(await row.getByRole('button', { name: 'Resume' }).isVisible()).toBe(true);

    await row.getByRole('link', { name: 'Blank page' }).click();
    const item = page.locator('.timeline-item').first();
    await expect.poll(() => item.getByText('Inconclusive', { exact: true }).isVisible()).toBe(true);
    expect(await item.locator('.inconclusive-codes').textContent()).toContain('Blank picture');
  });

  it('shows the lines a check added and removed first, before its pictures', async () => {
    Object.assign(watched, { clock: false, price: '49' });
    try {
      const monitor = await monitorOf({ name: 'Price page', mask_selectors: [], threshold: 0 });
      await runChecked(monitor.id, 1);
      watched.price = '59';
      await runChecked(monitor.id, 2);
    } finally {
      Object.assign(watched, { clock: true, price: null });
    }
    await openMonitors();
    await page.getByRole('link', { name: 'Price page' }).click();
    const compare = page.locator('.monitor-compare');
    const diff = compare.getByRole('list', { name: 'Text change' });
    await expect.poll(() => diff.locator('del').allTextContents()).toEqual(['− Price: 49 EUR']);
    expect(await diff.locator('ins').allTextContents()).toEqual(['+ Price: 59 EUR']);
    // The words come before the pictures, in the comparison and in the timeline.
    const before = await diff.evaluate((list) => Boolean(list.compareDocumentPosition(document.querySelector('.compare-side img')!) & Node.DOCUMENT_POSITION_FOLLOWING));
    expect(before).toBe(true);
    expect(await page.locator('.timeline-item').first().getByRole('list', { name: 'Text change' }).locator('ins').allTextContents()).toEqual(['+ Price: 59 EUR']);
    expect(await compare.getByText(/% of the pixels differ/).first().isVisible()).toBe(true);
    await shoot(page, 'monitor-text-change');
  });

  it('shows the masks proposed over a live clock on the latest picture, and Accept makes them rectangle masks', async () => {
    const monitor = await monitorOf({ name: 'Clock page', mask_selectors: [], propose_masks: true });
    await runChecked(monitor.id, 1);
    await expect.poll(async () => (await monitorNamed('Clock page')).proposed_masks.length, { timeout: 30_000, interval: 200 }).toBe(1);
    const [proposed] = (await monitorNamed('Clock page')).proposed_masks;

    await openMonitors();
    const row = page.getByRole('row', { name: /Clock page/ });
    await expect.poll(() => row.getByRole('link', { name: '1 mask proposed' }).isVisible(), { timeout: 10_000 }).toBe(true);
    await row.getByRole('link', { name: '1 mask proposed' }).click();
    const card = page.getByRole('region', { name: 'Proposed masks' });
    await expect.poll(() => card.locator('.picture-box').count()).toBe(1);
    expect(await card.getByRole('list', { name: 'Masks proposed' }).textContent()).toContain(`${Math.round(proposed.width)} × ${Math.round(proposed.height)}`);
    expect(await page.locator('.timeline-item').first().getByText('Second picture of the first baseline').isVisible()).toBe(true);
    await shoot(page, 'monitor-proposed-masks');

    await card.getByRole('button', { name: 'Accept' }).click();
    await expect.poll(async () => (await monitorNamed('Clock page')).mask_rects).toEqual([proposed]);
    expect((await monitorNamed('Clock page')).proposed_masks).toEqual([]);
    await expect.poll(() => card.isVisible()).toBe(false);
  });

  it('saves rectangle masks, pausing after inconclusive checks and notifications from the form', async () => {
    await openMonitors();
    await page.getByRole('row', { name: /Price page/ }).getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit monitor' });
    await dialog.getByRole('button', { name: 'Add a rectangle' }).click();
    await dialog.getByLabel('x of rectangle 1').fill('600');
    await dialog.getByLabel('y of rectangle 1').fill('300');
    await dialog.getByLabel('Width of rectangle 1').fill('240');
    await dialog.getByLabel('Height of rectangle 1').fill('60');
    await dialog.getByLabel('Tolerance of rectangle 1').fill('2');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.getByRole('alert').first().textContent()).toContain('tolerance is a fraction from 0 to 1');
    await dialog.getByLabel('Tolerance of rectangle 1').fill('0.2');
    await dialog.getByLabel('Pause after').fill('3');
    await dialog.getByLabel('E-mail addresses').fill('ops@example.test\nprices@example.test');
    await dialog.getByLabel('Slack webhook URL').fill('https://hooks.example.test/slack/T0/B0');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await page.getByRole('row', { name: /Price page/ }).getByRole('button', { name: 'Edit' }).click();
    await dialog.getByRole('group', { name: 'Masked rectangles' }).scrollIntoViewIfNeeded();
    await shoot(dialog, 'monitor-form');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await monitorNamed('Price page')).toMatchObject({
      mask_rects: [{ x: 600, y: 300, width: 240, height: 60, tolerance: 0.2 }],
      pause_after_inconclusive: 3,
      notify: { email: ['ops@example.test', 'prices@example.test'], slack_url: expect.any(String), teams_url: null },
    });
  });

  it('saves the SMTP server from the settings page, its password never read back, and shows field errors at their fields, its own and the server’s', async () => {
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Settings' }).click();
    const smtp = page.getByRole('group', { name: 'E-mail (SMTP)' });
    await smtp.getByLabel('SMTP host').fill('127.0.0.1');
    await smtp.getByLabel('SMTP port').fill('70000');
    await smtp.getByLabel('SMTP user name').fill('monitors');
    await smtp.getByLabel('SMTP password').fill('s3cret-pass');
    await smtp.getByLabel('From', { exact: true }).fill('monitors@example.test');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const port = smtp.getByLabel('SMTP port');
    await expect.poll(() => port.getAttribute('aria-invalid')).toBe('true');
    expect(await smtp.getByText('Enter a port from 1 to 65535').isVisible()).toBe(true);

    await port.fill('2525');
    // The server's 400 names its field too: a host longer than a DNS name may be.
    const host = smtp.getByLabel('SMTP host');
    await host.fill(`${'h'.repeat(250)}.test`);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => host.getAttribute('aria-invalid')).toBe('true');
    expect(await port.getAttribute('aria-invalid')).toBeNull();
    expect((await server.admin('GET', '/settings')).body.smtp ?? null).toBeNull();

    await host.fill('127.0.0.1');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => (await server.admin('GET', '/settings')).body.smtp).toEqual({
      host: '127.0.0.1',
      port: 2525,
      secure: false,
      username: 'monitors',
      from: 'monitors@example.test',
      has_password: true,
    });
    await expect.poll(() => smtp.getByLabel('SMTP password').getAttribute('placeholder')).toBe('Set: leave empty to keep it');
    expect(await smtp.getByLabel('SMTP password').inputValue()).toBe('');
    await shoot(smtp, 'settings-smtp');
  });
});
