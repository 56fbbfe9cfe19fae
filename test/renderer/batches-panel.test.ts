// The control panel shows the batches above the jobs: progress, failures first, the archive link.
// A real server (with a scripted engine: the pages are not what is tested) and real Chromium for the panel.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { readZip } from '../helpers/zip-entries.js';

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

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ensurePanelBuilt();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  server = await startTestServer({ ratePerSecond: 1000 }, { engine: new FakeCaptureEngine() });
  browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', acceptDownloads: true });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  for (const close of [() => browser?.close(), () => server?.close()]) {
    try {
      await close();
    } catch {
      // already gone
    }
  }
});

/** Denied by the egress policy (the test server allows 127.0.0.1 only): such a job fails as soon as it runs. */
const DENIED = 'http://127.0.0.2:1/';

describe('control panel: batches', () => {
  it('lists the batches in the jobs view with their progress, the one with failures first, and links each archive', async () => {
    const { key } = await server.account({ email: 'batches@example.test' });
    const post = async (items: Array<{ url: string }>) => (await (await server.v1('POST', '/batches', key, { items })).json()).batch_id as string;
    const clean = await post([{ url: 'http://127.0.0.1:9/a' }, { url: 'http://127.0.0.1:9/b' }]);
    const failing = await post([{ url: 'http://127.0.0.1:9/c' }, { url: DENIED }, { url: `${DENIED}x` }]);
    for (const id of [clean, failing]) {
      await expect.poll(async () => (await (await server.v1('GET', `/batches/${id}`, key)).json()).status).toBe('completed');
    }

    await page.goto(server.srv.adminUrl);
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Jobs' }).click();
    const section = page.getByRole('region', { name: 'Batches' });
    await expect.poll(() => section.locator('tr[data-batch-id]').count()).toBe(2);
    expect(await section.locator('tr[data-batch-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-batch-id')))).toEqual([failing, clean]);
    const row = section.locator(`tr[data-batch-id="${failing}"]`);
    expect(await row.getByRole('progressbar', { name: 'Batch progress: 3 of 3 ended' }).getAttribute('aria-valuenow')).toBe('100');
    expect(await row.locator('td.batch-failed').textContent()).toBe('2');
    expect(await row.textContent()).toContain('batches@example.test');
    await page.screenshot({ path: path.join(ARTIFACTS, 'jobs-batches.png'), animations: 'disabled' });

    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: 'ZIP' }).click()]);
    expect(download.suggestedFilename()).toBe(`${failing}.zip`);
    const entries = await readZip(fs.readFileSync((await download.path())!));
    expect([...entries.keys()].filter((name) => name.endsWith('.png'))).toHaveLength(1);
    expect(JSON.parse(entries.get('manifest.json')!.toString()).items.map((i: { status: string }) => i.status)).toEqual(['completed', 'failed', 'failed']);
  });
});
