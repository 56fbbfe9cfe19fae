// The control panel sets, shows (without the secret) and removes an account's storage
// destination. A real server and the panel in real Chromium.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { loadConfig } from '../../server/config.js';
import { type RunningServer, startServer } from '../../server/server.js';

const ARTIFACTS = path.resolve('test-artifacts/panel');
const BUILT_PANEL = path.resolve('dist/renderer/index.html');
const SECRET = 'panel-secret-4f1c9e0b7a5d3c2e1f0a9b8c';
const KEY_ID = 'AKIAPANELKEYID001234';

/** `npm test` builds the panel first; a lone run of this file builds it when it is missing. */
function ensurePanelBuilt(): void {
  if (fs.existsSync(BUILT_PANEL)) return;
  execFileSync(process.execPath, [path.resolve('node_modules/vite/bin/vite.js'), 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'], {
    stdio: 'inherit',
    timeout: 120_000,
  });
}

describe('control panel: storage destination', () => {
  let dataDir: string;
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let accountId = '';
  const email = 'storage@example.test';

  const adminApi = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${srv.url}/admin/api${route}`, {
      method,
      headers: { authorization: `Bearer ${srv.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
  };

  beforeAll(async () => {
    ensurePanelBuilt();
    await fsp.mkdir(ARTIFACTS, { recursive: true });
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'sa-panel-storage-'));
    srv = await startServer(loadConfig({ CHROMIUM_PATH: process.env.CHROMIUM_PATH }, { host: '127.0.0.1', port: 0, dataDir, browsers: 1 }), { log: () => undefined });
    accountId = (await adminApi('POST', '/accounts', { email, email_verified: true })).body.id;
    browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    for (const close of [() => browser?.close(), () => srv?.close()]) {
      try {
        await close();
      } catch {
        // already gone
      }
    }
    if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
  });

  const openDialog = async () => {
    await page.getByRole('button', { name: `Storage destination of ${email}` }).click();
    return page.getByRole('dialog', { name: `Storage destination of ${email}` });
  };

  it('sets a destination, shows it with the access key id masked and never the secret, and removes it', async () => {
    await page.goto(srv.adminUrl);
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('button', { name: `Storage destination of ${email}` }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'accounts-storage-button.png'), animations: 'disabled' });
    let dialog = await openDialog();
    await expect.poll(() => dialog.getByRole('status').textContent()).toContain('No storage destination');

    await dialog.getByLabel('Endpoint').fill('https://s3.eu-west-1.example.test');
    await dialog.getByLabel('Bucket').fill('Not_A_Bucket');
    await dialog.getByLabel('Region').fill('eu-west-1');
    await dialog.getByLabel('Key prefix').fill('screens/');
    await dialog.getByLabel('Access key id').fill(KEY_ID);
    await dialog.getByLabel('Secret access key').fill(SECRET);
    expect(await dialog.getByLabel('Secret access key').getAttribute('type')).toBe('password');
    await dialog.getByRole('button', { name: 'Save destination' }).click();
    // The server's 400 names the field, and the panel puts it under that field.
    await expect.poll(() => dialog.getByLabel('Bucket').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.locator('.field-error').textContent()).toMatch(/^bucket must be/);

    await dialog.getByLabel('Bucket').fill('customer-shots');
    await dialog.getByRole('button', { name: 'Save destination' }).click();
    const facts = dialog.getByLabel('Current storage destination');
    await expect.poll(() => facts.textContent()).toContain('customer-shots');
    expect(await facts.textContent()).toContain('AKIA…1234');
    expect(await facts.textContent()).toContain('screens');
    expect(await dialog.getByLabel('Secret access key').inputValue()).toBe('');
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.content()).not.toContain(KEY_ID);
    expect((await adminApi('GET', `/accounts/${accountId}/storage`)).body).toMatchObject({ bucket: 'customer-shots', region: 'eu-west-1', prefix: 'screens', access_key_id: 'AKIA…1234' });
    await page.screenshot({ path: path.join(ARTIFACTS, 'storage-destination.png'), animations: 'disabled' });

    // Seen again later: the destination without its credentials, which a replacement asks for anew.
    await page.keyboard.press('Escape');
    dialog = await openDialog();
    await expect.poll(() => dialog.getByLabel('Current storage destination').textContent()).toContain('customer-shots');
    expect(await dialog.getByLabel('Bucket').inputValue()).toBe('customer-shots');
    await dialog.getByRole('button', { name: 'Replace destination' }).click();
    await expect.poll(() => dialog.getByLabel('Secret access key').getAttribute('aria-invalid')).toBe('true');
    expect(await page.content()).not.toContain(SECRET);

    await dialog.getByRole('button', { name: 'Remove destination…' }).click();
    await dialog.getByRole('group', { name: 'Confirm removal' }).getByRole('button', { name: 'Remove now' }).click();
    await expect.poll(() => dialog.getByRole('status').textContent()).toContain('No storage destination');
    expect((await adminApi('GET', `/accounts/${accountId}/storage`)).status).toBe(404);
  });
});
