import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { loadConfig } from '../../server/config.js';
import { type RunningServer,startServer } from '../../server/server.js';
import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';

const CHROMIUM = '/usr/lib/chromium/chromium';
const ARTIFACTS = path.resolve('test-artifacts/panel');
const BUILT_PANEL = path.resolve('dist/renderer/index.html');

/** `npm test` builds the panel first; a lone run of this file builds it when it is missing. */
function ensurePanelBuilt(): void {
  if (fs.existsSync(BUILT_PANEL)) return;
  execFileSync(process.execPath, [path.resolve('node_modules/vite/bin/vite.js'), 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'], {
    stdio: 'inherit',
    timeout: 120_000,
  });
}

/**
 * The pictures the docs show, by the name the test gives them. `PANEL_DOCS=1 npx vitest run
 * test/renderer/control-panel.test.ts` copies them to docs/img/; a run just to test leaves the
 * tree as it was.
 */
const DOCS_IMG = path.resolve('docs/img');
const DOCS_SHOTS: Record<string, string> = {
  dashboard: 'panel-dashboard.png',
  'key-created': 'panel-new-key.png',
  'job-options': 'panel-job-details.png',
  'phone-jobs': 'panel-phone-jobs.png',
};
const COPY_TO_DOCS = process.env.PANEL_DOCS === '1';

/** A full-page picture of what the user sees, without the passing toasts. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({
    path: file,
    fullPage: true,
    animations: 'disabled',
    style: '.toasts { display: none !important; }',
  });
  const docsName = DOCS_SHOTS[name];
  if (COPY_TO_DOCS && docsName) await fsp.copyFile(file, path.join(DOCS_IMG, docsName));
}

describe('control panel', () => {
  let fixture: FixtureServer;
  let dataDir: string;
  let srv: RunningServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const email = 'ops@example.test';
  let secretKey = '';
  let jobId = '';

  const adminApi = async (route: string) => {
    const res = await fetch(`${srv.url}/admin/api${route}`, {
      headers: { authorization: `Bearer ${srv.adminToken}` },
      signal: AbortSignal.timeout(10_000),
    });
    return (await res.json()) as any;
  };
  const v1 = (method: string, route: string, body?: unknown) =>
    fetch(`${srv.url}/v1${route}`, {
      method,
      headers: { 'x-api-key': secretKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
  const goTo = async (label: string, title: string) => {
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: label }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1, name: title }).isVisible()).toBe(true);
  };

  beforeAll(async () => {
    ensurePanelBuilt();
    await fsp.mkdir(ARTIFACTS, { recursive: true });
    fixture = await startFixtureServer();
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'sa-panel-'));
    srv = await startServer(loadConfig({}, { host: '127.0.0.1', port: 0, dataDir, egressAllow: ['127.0.0.1/32'], browsers: 2 }), {
      log: () => undefined,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: BASE_ARGS, timeout: 30_000 });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.url });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    // Each close on its own, so one failure does not leave the others running.
    for (const close of [() => context?.close(), () => browser?.close(), () => srv?.close(), () => fixture?.close()]) {
      try {
        await close();
      } catch {
        // already gone
      }
    }
    if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
  });

  it('takes the token out of the address and keeps the session in an HttpOnly SameSite=Strict cookie', async () => {
    await page.goto(srv.adminUrl);
    await expect.poll(() => page.getByRole('heading', { level: 1, name: 'Dashboard' }).isVisible()).toBe(true);
    expect(page.url()).not.toContain(srv.adminToken);
    expect(page.url()).toBe(`${srv.url}/admin/#/`);
    // The history holds the blank start page and the panel, never the address with the token.
    await page.goBack();
    expect(page.url()).toBe('about:blank');
    await page.goForward();
    expect(page.url()).toBe(`${srv.url}/admin/#/`);
    await expect.poll(() => page.getByRole('heading', { level: 1, name: 'Dashboard' }).isVisible()).toBe(true);
    const cookies = await context.cookies(`${srv.url}/admin/`);
    const session = cookies.find((c) => c.name === 'sa_admin');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    expect(session!.value).not.toBe(srv.adminToken);
    expect(await page.evaluate(() => document.cookie)).toBe('');
  });

  it('refuses a state-changing request that carries the cookie but not the panel header', async () => {
    const status = await page.evaluate(() => fetch('/admin/api/queue/pause', { method: 'POST', credentials: 'same-origin' }).then((r) => r.status));
    expect(status).toBe(403);
    expect((await adminApi('/status')).queue.paused).toBe(false);
  });

  it('asks for the token when the address carries none, and refuses a wrong one next to the field', async () => {
    const other = await browser.newPage();
    try {
      await other.goto(`${srv.url}/admin/`);
      const field = other.getByLabel('Admin token');
      await field.fill('not-the-token');
      await other.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => other.getByRole('alert').textContent()).toContain('not right');
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      await field.fill(srv.adminToken);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => other.getByRole('heading', { level: 1, name: 'Dashboard' }).isVisible()).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('shows what to do on empty pages', async () => {
    await goTo('Accounts', 'Accounts');
    await expect.poll(() => page.getByRole('heading', { name: 'No accounts yet' }).isVisible()).toBe(true);
    await goTo('Jobs', 'Jobs');
    await expect.poll(() => page.getByRole('heading', { name: 'No jobs yet' }).isVisible()).toBe(true);
    await shoot(page, 'jobs-empty');
  });

  it('creates a verified Super User account', async () => {
    await goTo('Accounts', 'Accounts');
    await page.getByRole('button', { name: 'New account' }).click();
    const dialog = page.getByRole('dialog', { name: 'New account' });
    const isFocused = (l: ReturnType<Page['locator']>) => l.evaluate((el) => el === document.activeElement);
    // Focus starts in the first field and stays inside the dialog: Shift+Tab from the close
    // button wraps round to the last button.
    await expect.poll(() => isFocused(dialog.getByLabel('E-mail', { exact: true }))).toBe(true);
    await page.keyboard.press('Shift+Tab');
    expect(await isFocused(dialog.getByRole('button', { name: 'Close' }))).toBe(true);
    await page.keyboard.press('Shift+Tab');
    expect(await isFocused(dialog.getByRole('button', { name: 'Create account' }))).toBe(true);
    await page.keyboard.press('Tab');
    expect(await isFocused(dialog.getByRole('button', { name: 'Close' }))).toBe(true);

    await dialog.getByLabel('E-mail', { exact: true }).fill('not an address');
    await dialog.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => dialog.getByRole('alert').first().textContent()).toContain('Enter an e-mail address');

    await dialog.getByLabel('E-mail', { exact: true }).fill(email);
    await dialog.getByLabel('E-mail address verified').check();
    await dialog.getByLabel('Plan').selectOption('super_user');
    await dialog.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await expect.poll(() => page.getByRole('rowheader', { name: email }).isVisible()).toBe(true);
    expect(await page.getByRole('switch', { name: `E-mail verified for ${email}` }).isChecked()).toBe(true);

    const { accounts } = await adminApi('/accounts');
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ email, email_verified: true, plan: 'super_user' });
    await shoot(page, 'accounts');
  });

  it('switches the e-mail verified flag from the accounts table', async () => {
    const toggle = page.getByRole('switch', { name: `E-mail verified for ${email}` });
    const verified = async () => (await adminApi('/accounts')).accounts[0].email_verified;
    await toggle.uncheck();
    await expect.poll(verified).toBe(false);
    await toggle.check();
    await expect.poll(verified).toBe(true);
  });

  it('reveals the webhook secret on request and rotates it after confirmation', async () => {
    const accountId = (await adminApi('/accounts')).accounts[0].id;
    const { secret } = await adminApi(`/accounts/${accountId}/webhook-secret`);
    await page.getByRole('button', { name: `Webhook secret of ${email}` }).click();
    const dialog = page.getByRole('dialog', { name: `Webhook secret of ${email}` });
    const field = dialog.getByLabel('Secret');
    expect(await field.inputValue()).not.toContain('whsec_');
    await dialog.getByRole('button', { name: 'Reveal' }).click();
    await expect.poll(() => field.inputValue()).toBe(secret);

    await dialog.getByRole('button', { name: 'Rotate secret…' }).click();
    await dialog.getByRole('button', { name: 'Rotate now' }).click();
    await expect.poll(() => field.inputValue()).not.toBe(secret);
    const rotated = await field.inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect((await adminApi(`/accounts/${accountId}/webhook-secret`)).secret).toBe(rotated);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
  });

  it('creates a key and shows the secret exactly once', async () => {
    await page.getByRole('link', { name: `API keys of ${email}` }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1, name: 'API keys' }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('heading', { name: 'No keys for this account yet' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'New key' }).click();
    const form = page.getByRole('dialog', { name: `New key for ${email}` });
    await form.getByLabel('Name').fill('e2e client');
    await form.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    const keyField = shown.getByLabel('API key “e2e client”');
    // The whole key: `sa_` and 32 random bytes in base64url, whose `-` can split any run of word characters.
    await expect.poll(() => keyField.inputValue()).toMatch(/^sa_[A-Za-z0-9_-]{43}$/);
    secretKey = await keyField.inputValue();
    // Focus lands on the key, selected, ready for Ctrl+C.
    expect(await keyField.evaluate((el: HTMLInputElement) => el === document.activeElement && el.selectionEnd! - el.selectionStart!)).toBe(secretKey.length);
    await shoot(page, 'key-created');

    await shown.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => shown.getByRole('button', { name: 'Copied', exact: true }).isVisible()).toBe(true);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secretKey);

    await shown.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(() => shown.isVisible()).toBe(false);
    const [{ keys }] = [await adminApi(`/accounts/${(await adminApi('/accounts')).accounts[0].id}/keys`)];
    expect(keys).toHaveLength(1);
    expect(keys[0].key).toBeUndefined();
    expect(secretKey.startsWith(keys[0].prefix)).toBe(true);
    await expect.poll(() => page.getByRole('rowheader', { name: 'e2e client' }).isVisible()).toBe(true);
    expect(await page.locator('.key-prefix').first().textContent()).toBe(`${keys[0].prefix}…`);
    expect(await page.content()).not.toContain(secretKey);

    await page.reload();
    await expect.poll(() => page.getByRole('rowheader', { name: 'e2e client' }).isVisible()).toBe(true);
    expect(await page.content()).not.toContain(secretKey);
  });

  it('flags a wrong whitelist entry while it is typed, naming it, before anything is submitted', async () => {
    await page.getByRole('button', { name: 'Edit key e2e client' }).click();
    const dialog = page.getByRole('dialog', { name: /^Edit key/ });
    const entry = dialog.getByLabel('Add an IP address or CIDR range');
    const describedText = async () => dialog.locator(`[id="${await entry.getAttribute('aria-describedby')}"]`).textContent();

    await entry.pressSequentially('10.0.0.300', { delay: 30 });
    // Neither Enter nor Add nor Save: the pause in typing is enough.
    await expect.poll(() => entry.getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.getByRole('alert').textContent()).toContain('“10.0.0.300” is not an IPv4 or IPv6 address');
    expect(await describedText()).toContain('10.0.0.300');
    // Fixing it clears the error at once.
    await entry.press('Backspace');
    await expect.poll(() => entry.getAttribute('aria-invalid')).toBe(null);
    expect(await dialog.getByRole('alert').count()).toBe(0);

    // A pasted list is checked entry by entry, and the wrong one is named.
    await entry.fill('10.0.0.0/8, 192.168.1.0/24 172.16.0.0/40');
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('In “172.16.0.0/40”, the prefix length after “/” must be a whole number from 0 to 32');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    const keyId = (await adminApi(`/accounts/${(await adminApi('/accounts')).accounts[0].id}/keys`)).keys[0].id;
    expect((await adminApi(`/keys/${keyId}`)).ip_whitelist).toEqual([]);
  });

  it('refuses an invalid whitelist entry next to the field and saves a valid one', async () => {
    await page.getByRole('button', { name: 'Edit key e2e client' }).click();
    const dialog = page.getByRole('dialog', { name: /^Edit key/ });
    const entry = dialog.getByLabel('Add an IP address or CIDR range');

    await entry.fill('10.0.0.300');
    await entry.press('Enter');
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('“10.0.0.300” is not an IPv4 or IPv6 address');
    expect(await entry.getAttribute('aria-invalid')).toBe('true');
    const describedBy = await entry.getAttribute('aria-describedby');
    expect(await dialog.locator(`[id="${describedBy}"]`).textContent()).toContain('10.0.0.300');
    await shoot(page, 'whitelist-invalid');

    await entry.fill('192.168.0.0/33');
    await dialog.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('from 0 to 32');

    await entry.fill('127.0.0.0/8');
    await dialog.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(() => dialog.getByRole('button', { name: 'Remove 127.0.0.0/8' }).isVisible()).toBe(true);
    expect(await dialog.getByRole('alert').count()).toBe(0);
    expect(await dialog.getByRole('button', { name: 'Remove 10.0.0.300' }).count()).toBe(0);

    // A valid address typed but not added yet is saved too, rather than silently dropped.
    await entry.fill('::1');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    const keyId = (await adminApi(`/accounts/${(await adminApi('/accounts')).accounts[0].id}/keys`)).keys[0].id;
    expect((await adminApi(`/keys/${keyId}`)).ip_whitelist).toEqual(['127.0.0.0/8', '::1']);
    await expect.poll(() => page.getByRole('row', { name: /e2e client/ }).textContent()).toContain('127.0.0.0/8');
    await shoot(page, 'keys');
  });

  it('shows a job submitted through the v1 API reaching completed, with its thumbnail', async () => {
    await goTo('Jobs', 'Jobs');
    const res = await v1('POST', '/screenshot', { url: `${fixture.url}/small.html` });
    expect(res.status).toBe(201);
    jobId = ((await res.json()) as { job_id: string }).job_id;

    // No reload: the list polls by itself.
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 45_000, interval: 250 }).toBe('completed');
    const thumb = row.locator('img.thumb');
    await expect.poll(() => thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 10_000 }).toBeGreaterThan(0);
    const job = await adminApi(`/jobs/${jobId}`);
    expect(await thumb.getAttribute('src')).toBe(job.thumbnail_url);
    expect(await row.textContent()).toContain(email);
    await shoot(page, 'jobs');
  });

  it('opens a job to show the image link and the captured HTML as text, and closes on Escape', async () => {
    const opener = page.locator(`tr[data-job-id="${jobId}"]`).getByRole('button', { name: `${fixture.url}/small.html` });
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'Job details' });
    await expect.poll(() => dialog.getByRole('link', { name: 'Open image' }).getAttribute('href')).toContain('http');
    await dialog.getByRole('button', { name: 'View HTML' }).click();
    const source = dialog.getByLabel('Captured HTML source');
    await expect.poll(() => source.textContent()).toContain('<h1 id="title">Hello from the fixture</h1>');
    // Shown as text: the captured markup did not become elements of the panel.
    expect(await page.locator('#title').count()).toBe(0);
    await shoot(page, 'job-details');

    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await opener.evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it('shows settings errors next to their fields, its own and the server’s, and saves valid settings', async () => {
    await goTo('Settings', 'Settings');
    const concurrency = page.getByLabel('Captures at once');
    const retention = page.getByLabel('Keep images for (days)');
    const save = page.getByRole('button', { name: 'Save settings' });
    const errorOf = async (field: typeof concurrency) => page.locator(`[id="${await field.getAttribute('aria-describedby')}"]`).textContent();
    await expect.poll(() => concurrency.inputValue()).toMatch(/^\d+$/);

    await concurrency.fill('0');
    await save.click();
    await expect.poll(() => errorOf(concurrency)).toContain('at least 1');
    await concurrency.fill('2');

    // Past the server's bound, which the page does not know: the server's 400 names the field.
    await retention.fill('99999');
    await save.click();
    await expect.poll(() => errorOf(retention)).toContain('retention_days must be');
    expect(await retention.getAttribute('aria-invalid')).toBe('true');

    await retention.fill('14');
    // Time-outs are typed in seconds and kept by the API in milliseconds, within its 1–300 s.
    const pageLoad = page.getByLabel('Page load time-out (s)');
    const capture = page.getByLabel('Capture time-out (s)');
    const before = await adminApi('/settings');
    expect(await pageLoad.inputValue()).toBe(String(before.navigation_timeout_ms / 1000));
    expect(await capture.inputValue()).toBe(String(before.capture_timeout_ms / 1000));
    await capture.fill('301');
    await save.click();
    await expect.poll(() => errorOf(capture)).toBe('Enter a number of seconds from 1 to 300 (e.g. 30 or 1.5).');
    expect(await capture.getAttribute('aria-invalid')).toBe('true');
    expect((await adminApi('/settings')).capture_timeout_ms).toBe(before.capture_timeout_ms);
    await capture.fill('45.5');
    // Short, so the hanging page of the next test fails soon.
    await pageLoad.fill('6');
    await save.click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Settings saved');
    expect(await adminApi('/settings')).toMatchObject({ retention_days: 14, navigation_timeout_ms: 6000, capture_timeout_ms: 45_500, concurrency: 2 });
    expect(await pageLoad.inputValue()).toBe('6');
    expect(await capture.inputValue()).toBe('45.5');
    // The test server's --egress-allow range is shown read-only and is not saved with the form.
    expect(await page.getByRole('list', { name: 'Ranges allowed at start' }).textContent()).toContain('127.0.0.1');
    expect(await adminApi('/settings')).toMatchObject({ egress_allow: [], egress_allow_command_line: ['127.0.0.1'] });
    await shoot(page, 'settings');
  });

  it('follows a running job live, shows why it failed, and redelivers its webhook', async () => {
    await goTo('Jobs', 'Jobs');
    const res = await v1('POST', '/screenshot', { url: `${fixture.url}/hang`, callback_url: `${fixture.url}/status/204` });
    expect(res.status).toBe(201);
    const hangId = ((await res.json()) as { job_id: string }).job_id;
    const row = page.locator(`tr[data-job-id="${hangId}"]`);

    await expect.poll(() => row.getAttribute('data-status'), { timeout: 10_000, interval: 100 }).toBe('processing');
    expect(Number(await row.getByRole('progressbar').getAttribute('aria-valuenow'))).toBeGreaterThan(0);
    await shoot(page, 'jobs-running');
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 30_000, interval: 250 }).toBe('failed');
    const job = await adminApi(`/jobs/${hangId}`);
    expect(job.error).toBeTruthy();
    await expect.poll(() => row.textContent()).toContain(job.error);

    await page.getByLabel('Status').selectOption('failed');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await row.count()).toBe(1);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);

    await row.getByRole('button', { name: `${fixture.url}/hang` }).click();
    const dialog = page.getByRole('dialog', { name: 'Job details' });
    await expect.poll(() => dialog.getByRole('note').textContent()).toContain(job.error);
    const deliveries = dialog.getByRole('region', { name: 'Webhook deliveries' });
    await expect.poll(() => deliveries.locator('.badge').first().textContent(), { timeout: 20_000 }).toBe('succeeded');
    expect(await deliveries.locator('tbody tr').count()).toBe(1);
    await deliveries.getByRole('button', { name: 'Redeliver' }).click();
    await expect.poll(() => deliveries.locator('tbody tr').count()).toBe(2);
    expect(await deliveries.locator('tbody tr').nth(1).textContent()).toContain('HTTP 204');
    expect(fixture.seen('/status/204')).toHaveLength(2);
    await shoot(page, 'job-failed');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
  });

  it('shows the queue, the captures and the usage per account on the dashboard, and pauses the queue', async () => {
    await goTo('Dashboard', 'Dashboard');
    const stats = page.getByRole('list', { name: 'Service status' });
    const stat = (label: string) => stats.getByRole('listitem').filter({ hasText: label }).locator('.stat-value');
    await expect.poll(() => stat('Captures, 24 h').textContent()).toBe('1');
    await expect.poll(() => stat('Failures, 24 h').textContent()).toBe('1');
    const engine = stats.getByRole('listitem').filter({ hasText: 'Engine' }).locator('.stat-note');
    await expect.poll(() => engine.textContent()).toMatch(/ready · 2 of 2 browsers up$/);
    await expect.poll(() => page.getByRole('img', { name: /Calls per day over the last 30 days: 2 in all/ }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('img', { name: /Captures per hour over the last 24 hours: 2 in all/ }).isVisible()).toBe(true);
    await shoot(page, 'dashboard');

    await page.getByRole('button', { name: 'Pause queue' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Resume queue' }).isVisible()).toBe(true);
    expect((await adminApi('/status')).queue.paused).toBe(true);
    expect(await stats.getByRole('listitem').filter({ hasText: 'Waiting' }).textContent()).toContain('Paused');
    await page.getByRole('button', { name: 'Resume queue' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Pause queue' }).isVisible()).toBe(true);
    expect((await adminApi('/status')).queue.paused).toBe(false);
  });

  it('shows the evidence signing key on the dashboard, as GET /v1/evidence/public-key gives it', async () => {
    await goTo('Dashboard', 'Dashboard');
    const shown = (await (await fetch(`${srv.url}/v1/evidence/public-key`)).json()).public_key;
    const card = page.locator('.card').filter({ has: page.getByRole('heading', { name: 'Evidence signing key' }) });
    await expect.poll(() => card.locator('code.code-box').textContent()).toBe(shown);
  });

  it('shows the options a job used, its HTTP status, final address, title and that it was cut, and none of the secrets it was given', async () => {
    const secrets = ['hdr-panel-s3cret', 'cookie-panel-s3cret', 'pw-panel-s3cret'];
    const apiAnswers: Array<Promise<string>> = [];
    const collect = (response: { url(): string; text(): Promise<string> }) => {
      if (response.url().includes('/admin/api/')) apiAnswers.push(response.text().catch(() => ''));
    };
    page.on('response', collect);
    try {
      await goTo('Jobs', 'Jobs');
      const finalUrl = `${fixture.url}/tall.html?h=17000`;
      const res = await v1('POST', '/screenshot', {
        // Taller than the 16384 px cap, and narrow so that is cheap.
        url: `${fixture.url}/redirect?to=${encodeURIComponent('/tall.html?h=17000')}`,
        full_page: true,
        width: 320,
        dark_mode: true,
        delay: 100,
        hide_selectors: ['.banner'],
        headers: { 'X-Panel-Secret': secrets[0] },
        cookies: [{ name: 'panel_sid', value: secrets[1] }],
        http_auth: { username: 'reader', password: secrets[2] },
        callback_url: `${fixture.url}/status/204?job-options`,
      });
      expect(res.status).toBe(201);
      const optionsJobId = ((await res.json()) as { job_id: string }).job_id;
      const row = page.locator(`tr[data-job-id="${optionsJobId}"]`);
      await expect.poll(() => row.getAttribute('data-status'), { timeout: 60_000, interval: 250 }).toBe('completed');

      await row.getByRole('button', { name: `${fixture.url}/redirect` }).click();
      const dialog = page.getByRole('dialog', { name: 'Job details' });
      const options = dialog.getByRole('region', { name: 'Options' });
      await expect.poll(() => options.isVisible()).toBe(true);
      /** The term → description pairs of a description list. */
      const pairs = (list: ReturnType<Page['locator']>) =>
        list.evaluate((dl) =>
          Object.fromEntries([...dl.querySelectorAll('dt')].map((dt) => [dt.textContent?.trim(), dt.nextElementSibling?.textContent?.trim()])),
        );
      // However tall the page, its facts are at hand: the preview shows its top, the list is not stretched to its height.
      const cut = dialog.locator('dt', { hasText: 'Cut' });
      const box = await cut.boundingBox();
      expect(box && box.y + box.height, 'the Cut fact is on screen').toBeLessThanOrEqual(800);
      expect(await pairs(dialog.locator('dl.facts').first())).toMatchObject({
        'HTTP status': '200',
        'Ended at': finalUrl,
        Title: 'Tall page',
        Cut: 'the page was taller than a capture may be; the image stops at the limit',
      });
      // Secrets by name only, as the admin API gives them.
      const shown = { dark_mode: 'true', delay: '100', hide_selectors: '[".banner"]', header_names: '["X-Panel-Secret"]', cookie_names: '["panel_sid"]', http_auth: 'true' };
      expect(await pairs(options.locator('dl'))).toEqual(shown);
      expect((await adminApi(`/jobs/${optionsJobId}`)).options).toEqual({
        dark_mode: true,
        delay: 100,
        hide_selectors: ['.banner'],
        header_names: ['X-Panel-Secret'],
        cookie_names: ['panel_sid'],
        http_auth: true,
      });
      const deliveries = dialog.getByRole('region', { name: 'Webhook deliveries' });
      await expect.poll(() => deliveries.locator('.badge').first().textContent(), { timeout: 20_000 }).toBe('succeeded');
      // Tall enough for the picture to show the whole dialog down to the webhook.
      await page.setViewportSize({ width: 1280, height: 1400 });
      await shoot(page, 'job-options');
      await page.setViewportSize({ width: 1280, height: 800 });

      const everything = [await page.content(), await page.evaluate(() => document.body.innerText), ...(await Promise.all(apiAnswers))].join('\n');
      expect(everything).toContain('X-Panel-Secret');
      for (const secret of secrets) expect(everything.includes(secret), `${secret} in the panel`).toBe(false);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(false);
    } finally {
      page.off('response', collect);
    }
  });

  it('shows a completed PDF job as a PDF placeholder linking to the file, without loading the PDF as an image', async () => {
    const pdfRequests: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (/\.pdf(\?|$)/.test(request.url())) pdfRequests.push(request.url());
    };
    page.on('request', onRequest);
    try {
      await goTo('Jobs', 'Jobs');
      const res = await v1('POST', '/screenshot', { url: `${fixture.url}/small.html`, format: 'pdf' });
      expect(res.status).toBe(201);
      const pdfId = ((await res.json()) as { job_id: string }).job_id;
      const row = page.locator(`tr[data-job-id="${pdfId}"]`);
      await expect.poll(() => row.getAttribute('data-status'), { timeout: 45_000, interval: 250 }).toBe('completed');
      const job = await adminApi(`/jobs/${pdfId}`);
      expect(job.thumbnail_url).toBeUndefined();
      const link = row.getByRole('link', { name: `Open the screenshot of ${fixture.url}/small.html` });
      expect(await link.getAttribute('href')).toBe(job.screenshot_url);
      expect(await link.locator('img').count()).toBe(0);
      expect(await link.textContent()).toBe('PDF');
      expect(pdfRequests).toEqual([]);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('makes a render link for a URL typed in, copies it, and ends it by rotating the signing secret', async () => {
    await goTo('API keys', 'API keys');
    await page.getByRole('button', { name: 'Render link with key e2e client' }).click();
    const dialog = page.getByRole('dialog', { name: 'Render link with key e2e client' });
    await dialog.getByRole('button', { name: 'Make link' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('http:// or https://');
    await dialog.getByLabel('Page to capture').fill(`${fixture.url}/small.html?render-link`);
    await dialog.getByLabel('Device').selectOption('mobile');
    await dialog.getByRole('button', { name: 'Make link' }).click();
    await dialog.getByRole('button', { name: 'Copy render link' }).click();
    await expect.poll(() => dialog.getByRole('button', { name: 'Copied' }).isVisible()).toBe(true);
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toMatch(new RegExp(`^${srv.url}/v1/render\\?.*&signature=[0-9a-f]{64}$`));
    expect(await dialog.getByLabel('Render link').inputValue()).toBe(link);
    await shoot(page, 'render-link');

    const picture = await fetch(link, { signal: AbortSignal.timeout(60_000) });
    expect(picture.status).toBe(200);
    expect(picture.headers.get('content-type')).toBe('image/png');
    // The mobile preset's width, 390 CSS px at scale 3, read from the PNG header.
    expect(Buffer.from(await picture.arrayBuffer()).readUInt32BE(16)).toBe(1170);

    await dialog.getByRole('button', { name: 'Rotate signing secret…' }).click();
    await dialog.getByRole('button', { name: 'Rotate now' }).click();
    await expect.poll(() => dialog.getByLabel('New signing secret (shown this once)').inputValue()).toMatch(/^sas_[A-Za-z0-9_-]{43}$/);
    expect((await fetch(link, { signal: AbortSignal.timeout(10_000) })).status).toBe(403);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
  });

  it('revokes the key only after confirmation, and the API then answers 401', async () => {
    await goTo('API keys', 'API keys');
    await page.getByRole('button', { name: 'Revoke key e2e client' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke this key?' });
    await expect.poll(() => confirm.isVisible()).toBe(true);
    await shoot(page, 'key-revoke-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => confirm.isVisible()).toBe(false);
    expect((await v1('GET', '/usage')).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke key e2e client' }).click();
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => confirm.isVisible()).toBe(false);
    await expect.poll(() => page.getByRole('row', { name: /e2e client/ }).textContent()).toContain('Revoked');

    const res = await v1('POST', '/screenshot', { url: `${fixture.url}/small.html` });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('Unauthorized');
  });

  it('explains on the accounts page why an account on the Basic plan cannot use the API', async () => {
    await goTo('Accounts', 'Accounts');
    await page.getByRole('button', { name: 'New account' }).click();
    const dialog = page.getByRole('dialog', { name: 'New account' });
    await dialog.getByLabel('E-mail', { exact: true }).fill('basic@example.test');
    await dialog.getByLabel('E-mail address verified').check();
    await dialog.getByLabel('Plan').selectOption('basic');
    const reason = 'Basic: the API refuses this account’s keys with 403 “Access denied”.';
    expect(await dialog.locator(`[id="${await dialog.getByLabel('Plan').getAttribute('aria-describedby')}"]`).textContent()).toBe(reason);
    await dialog.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);

    const basicRow = page.getByRole('row', { name: /basic@example\.test/ });
    await expect.poll(() => basicRow.textContent()).toContain(reason);
    expect(await page.getByRole('row', { name: new RegExp(email) }).textContent()).not.toContain('refuses');
    await shoot(page, 'accounts-basic');

    // What the panel says is what the API does.
    const basic = (await adminApi('/accounts')).accounts.find((a: { email: string }) => a.email === 'basic@example.test');
    const created = await fetch(`${srv.url}/admin/api/accounts/${basic.id}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.adminToken}`, 'content-type': 'application/json', 'x-requested-with': 'screenshot-appliance' },
      body: JSON.stringify({ name: 'basic client' }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const res = await fetch(`${srv.url}/v1/usage`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toBe('Access denied');
  });

  describe('at phone width (390×844)', () => {
    let phone: BrowserContext;
    let small: Page;
    /** How far the page, the tables and any open dialog scroll sideways, and what sticks out. */
    const overflow = () =>
      small.evaluate(() => {
        const sticking = [...document.querySelectorAll<HTMLElement>('body *')]
          .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5 && el.closest('.table-wrap, .visually-hidden') === null)
          .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
        const scrolling = [...document.querySelectorAll<HTMLElement>('.table-wrap, dialog[open]')]
          .filter((el) => el.scrollWidth > el.clientWidth)
          .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
        return { page: document.documentElement.scrollWidth - innerWidth, sticking: sticking.slice(0, 5), scrolling };
      });

    beforeAll(async () => {
      phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'light' });
      phone.setDefaultTimeout(15_000);
      small = await phone.newPage();
    });

    afterAll(async () => {
      await phone?.close();
    });

    it('collapses the navigation behind a menu button that the mouse and the keyboard open and close', async () => {
      await small.goto(srv.adminUrl);
      await expect.poll(() => small.getByRole('heading', { level: 1, name: 'Dashboard' }).isVisible()).toBe(true);
      const menu = small.getByRole('button', { name: 'Menu' });
      const link = small.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Jobs' });
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await link.isVisible()).toBe(false);

      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await expect.poll(() => link.isVisible()).toBe(true);
      await shoot(small, 'phone-menu');
      await link.click();
      await expect.poll(() => small.getByRole('heading', { level: 1, name: 'Jobs' }).isVisible()).toBe(true);
      // Choosing a page folds the menu away again.
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await link.isVisible()).toBe(false);

      await menu.focus();
      await small.keyboard.press('Enter');
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await small.keyboard.press('Tab');
      expect(await small.evaluate(() => document.activeElement?.textContent)).toBe('Dashboard');
      await small.keyboard.press('Escape');
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await menu.evaluate((el) => el === document.activeElement)).toBe(true);
      await small.keyboard.press('Space');
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await small.keyboard.press('Space');
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
    });

    it('scrolls no page sideways, nor the tables, and fits the job list into the width', async () => {
      const pages = [
        ['', 'Dashboard', '.stats'],
        ['jobs', 'Jobs', 'tr[data-job-id]'],
        ['accounts', 'Accounts', 'tbody tr'],
        ['keys', 'API keys', 'tbody tr'],
        ['settings', 'Settings', 'form.settings'],
      ] as const;
      for (const [route, title, loaded] of pages) {
        await small.goto(`${srv.url}/admin/#/${route}`);
        await expect.poll(() => small.getByRole('heading', { level: 1, name: title }).isVisible()).toBe(true);
        await small.locator(loaded).first().waitFor();
        expect({ title, ...(await overflow()) }).toEqual({ title, page: expect.any(Number), sticking: [], scrolling: [] });
        expect(await small.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
        await shoot(small, `phone-${route || 'dashboard'}`);
      }
    });

    it('fits the job details and the key dialogs into the width', async () => {
      await small.goto(`${srv.url}/admin/#/jobs?job=${encodeURIComponent(jobId)}`);
      const details = small.getByRole('dialog', { name: 'Job details' });
      await expect.poll(() => details.getByRole('link', { name: 'Open image' }).isVisible()).toBe(true);
      expect(await overflow()).toEqual({ page: expect.any(Number), sticking: [], scrolling: [] });
      await shoot(small, 'phone-job-details');
      await small.keyboard.press('Escape');
      await expect.poll(() => details.isVisible()).toBe(false);

      await small.goto(`${srv.url}/admin/#/keys`);
      await small.getByRole('button', { name: 'New key' }).click();
      const form = small.getByRole('dialog', { name: /^New key for/ });
      await form.getByLabel('Add an IP address or CIDR range').fill('2001:db8:1234:5678:9abc:def0:1234:5678/128');
      await form.getByRole('button', { name: 'Add', exact: true }).click();
      await expect.poll(() => form.getByRole('button', { name: /^Remove 2001:db8/ }).isVisible()).toBe(true);
      expect(await overflow()).toEqual({ page: expect.any(Number), sticking: [], scrolling: [] });
      await shoot(small, 'phone-key-dialog');
      await form.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => form.isVisible()).toBe(false);
    });
  });
});
