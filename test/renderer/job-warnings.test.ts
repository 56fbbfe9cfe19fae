// The control panel shows a capture's warnings: a mark in the job list, the list in the job
// details. A real server and real Chromium for the captures and for the panel.
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
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';

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

describe('control panel: capture warnings', () => {
  let fixture: FixtureServer;
  let dataDir: string;
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let key = '';

  const adminApi = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${srv.url}/admin/api${route}`, {
      method,
      headers: { authorization: `Bearer ${srv.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    return (await res.json()) as any;
  };

  /** Captures `path` of the fixture server through the v1 API and waits for the job to complete. */
  const completedJob = async (pagePath: string): Promise<string> => {
    const res = await fetch(`${srv.url}/v1/screenshot`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${fixture.url}${pagePath}` }),
    });
    const { job_id } = (await res.json()) as { job_id: string };
    await expect.poll(async () => (await adminApi('GET', `/jobs/${job_id}`)).status, { timeout: 45_000, interval: 250 }).toBe('completed');
    return job_id;
  };

  beforeAll(async () => {
    ensurePanelBuilt();
    await fsp.mkdir(ARTIFACTS, { recursive: true });
    fixture = await startFixtureServer();
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'sa-panel-warnings-'));
    srv = await startServer(loadConfig({ CHROMIUM_PATH: process.env.CHROMIUM_PATH }, { host: '127.0.0.1', port: 0, dataDir, egressAllow: ['127.0.0.1/32'], browsers: 1 }), {
      log: () => undefined,
    });
    const account = await adminApi('POST', '/accounts', { email: 'warnings@example.test', email_verified: true });
    key = (await adminApi('POST', `/accounts/${account.id}/keys`, { name: 'panel' })).key;
    browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    for (const close of [() => browser?.close(), () => srv?.close(), () => fixture?.close()]) {
      try {
        await close();
      } catch {
        // already gone
      }
    }
    if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
  });

  it('marks a job with warnings in the list and lists them in its details; a clean job has no mark and says none', async () => {
    const troubled = await completedJob('/warn/console-errors.html');
    const clean = await completedJob('/warn/clean.html');
    await page.goto(srv.adminUrl);
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Jobs' }).click();

    const troubledRow = page.locator(`tr[data-job-id="${troubled}"]`);
    await expect.poll(() => troubledRow.getByLabel('1 warning: Console errors').isVisible()).toBe(true);
    expect(await troubledRow.locator('.warn-mark').getAttribute('data-warnings')).toBe('console_errors');
    expect(await page.locator(`tr[data-job-id="${clean}"] .warn-mark`).count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'jobs-warnings.png'), animations: 'disabled' });

    await troubledRow.getByRole('button', { name: `${fixture.url}/warn/console-errors.html` }).click();
    const warnings = page.getByRole('dialog', { name: 'Job details' }).getByRole('region', { name: 'Warnings' });
    await expect.poll(() => warnings.locator('li[data-code="console_errors"]').textContent()).toContain('The page reported 3 errors to its console (first: first error 42).');
    expect(await warnings.locator('li').count()).toBe(1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'job-warnings.png'), animations: 'disabled' });
    await page.keyboard.press('Escape');

    await page.locator(`tr[data-job-id="${clean}"]`).getByRole('button', { name: `${fixture.url}/warn/clean.html` }).click();
    const none = page.getByRole('dialog', { name: 'Job details' }).getByRole('region', { name: 'Warnings' });
    await expect.poll(() => none.textContent()).toContain('None: nothing wrong was found with the picture.');
  });
});
