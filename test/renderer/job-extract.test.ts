// The control panel shows what a capture extracted (`extract`): the metadata as a table and the
// Markdown rendered as elements, never as HTML. A real server and real Chromium for both.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

/** `npm test` builds the panel first; a lone run of this file builds it when it is missing. */
function ensurePanelBuilt(): void {
  if (fs.existsSync(BUILT_PANEL)) return;
  execFileSync(process.execPath, [path.resolve('node_modules/vite/bin/vite.js'), 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'], {
    stdio: 'inherit',
    timeout: 120_000,
  });
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Resolver guide</title>
<meta name="description" content="How the resolver is set up."><meta property="og:title" content="The resolver guide">
<link rel="canonical" href="/guide"></head><body>
<nav><a href="/">Navhome</a> <a href="/about">Navabout</a></nav>
<article><h1>Resolver guide</h1>
<p>The resolver reads one file at start; this guide walks through each of its sections and the options they hold, with examples to copy.
Written as &lt;b id="injected"&gt;bold&lt;/b&gt; here, which must stay text.</p>
<h2>Setting it up</h2>
<p>Install the package, then edit the file; the service reads it again when it is told to reload, without a restart of the machine.</p>
<pre><code>resolverctl reload</code></pre>
<table><thead><tr><th>Option</th><th>Meaning</th></tr></thead><tbody><tr><td>timeout</td><td>Seconds to wait</td></tr></tbody></table>
</article></body></html>`;

describe('control panel: extracted outputs', () => {
  let site: http.Server;
  let siteUrl = '';
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

  beforeAll(async () => {
    ensurePanelBuilt();
    await fsp.mkdir(ARTIFACTS, { recursive: true });
    site = http.createServer((req, res) => {
      if (req.url === '/guide.html') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'sa-panel-extract-'));
    srv = await startServer(loadConfig({ CHROMIUM_PATH: process.env.CHROMIUM_PATH }, { host: '127.0.0.1', port: 0, dataDir, egressAllow: ['127.0.0.1/32'], browsers: 1 }), {
      log: () => undefined,
    });
    const account = await adminApi('POST', '/accounts', { email: 'extract@example.test', email_verified: true });
    key = (await adminApi('POST', `/accounts/${account.id}/keys`, { name: 'panel' })).key;
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
    site?.closeAllConnections();
    await new Promise((resolve) => site?.close(resolve));
    if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
  });

  it('shows the metadata as a table and the Markdown rendered, its text never run as HTML', async () => {
    const res = await fetch(`${srv.url}/v1/screenshot`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${siteUrl}/guide.html`, extract: ['markdown', 'metadata'] }),
    });
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    await expect.poll(async () => (await adminApi('GET', `/jobs/${jobId}`)).status, { timeout: 45_000, interval: 250 }).toBe('completed');

    await page.goto(srv.adminUrl);
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'Jobs' }).click();
    await page.locator(`tr[data-job-id="${jobId}"]`).getByRole('button', { name: `${siteUrl}/guide.html` }).click();
    const extracted = page.getByRole('dialog', { name: 'Job details' }).getByRole('region', { name: 'Extracted' });
    const metadata = extracted.getByRole('table', { name: 'Page metadata' });
    await expect.poll(() => metadata.locator('tr', { hasText: 'Description' }).locator('td').textContent()).toBe('How the resolver is set up.');
    expect(await metadata.locator('tr', { hasText: 'og:title' }).locator('td').textContent()).toBe('The resolver guide');
    expect(await metadata.locator('tr', { hasText: 'Canonical URL' }).locator('td').textContent()).toBe(`${siteUrl}/guide`);

    await extracted.getByRole('button', { name: 'View Markdown' }).click();
    const markdown = extracted.getByLabel('Page content as Markdown');
    await expect.poll(() => markdown.locator('h4').first().textContent()).toBe('The resolver guide');
    expect(await markdown.locator('h5').textContent()).toBe('Setting it up');
    expect(await markdown.locator('pre code').textContent()).toBe('resolverctl reload');
    expect(await markdown.locator('table th').allTextContents()).toEqual(['Option', 'Meaning']);
    expect(await markdown.locator('table td').allTextContents()).toEqual(['timeout', 'Seconds to wait']);
    expect(await markdown.textContent()).toContain('<b id="injected">bold</b>');
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await markdown.textContent()).not.toContain('Navhome');
    await page.screenshot({ path: path.join(ARTIFACTS, 'job-extracted.png'), animations: 'disabled' });
  });
});
