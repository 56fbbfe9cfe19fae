import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// Saved logins and key network scopes in the control panel, in real Chromium against a real
// server: keys made and changed with a scope, logins of the three types made, refused credentials
// given again, a login deleted, and never a credential on the page or in an answer. Its pictures
// go to test-artifacts/panel/, and with PANEL_DOCS=1 to docs/img/ (run `npm run build` first: the
// test serves dist/renderer).

const CHROMIUM = '/usr/lib/chromium/chromium';
const ARTIFACTS = path.resolve('test-artifacts/panel');
const DOCS_IMG = path.resolve('docs/img');
const COPY_TO_DOCS = process.env.PANEL_DOCS === '1';

const FORM_PASSWORD = 'form-pw-81d3c0-never-shown';
const BASIC_PASSWORD = 'basic-pw-4a97e2-never-shown';
const NEW_PASSWORD = 'new-pw-c25b18-never-shown';
const COOKIE_VALUE = 'session-value-0f6e3b-never-shown';
const SECRETS = [FORM_PASSWORD, BASIC_PASSWORD, NEW_PASSWORD, COOKIE_VALUE];

async function shoot(page: Page, name: string): Promise<void> {
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: 'disabled', style: '.toasts { display: none !important; }' });
  if (COPY_TO_DOCS) await fsp.copyFile(file, path.join(DOCS_IMG, `panel-${name}.png`));
}

/** A sign-in page on loopback that refuses every user name and password. */
function startRefusingSignIn(): Promise<http.Server> {
  const form = (said: string) =>
    `<!doctype html><title>Sign in</title>${said}<form method="post" action="/login"><input name="user" type="text"><input name="pass" type="password"><button type="submit">Sign in</button></form>`;
  const server = http.createServer((req, res) => {
    req.resume();
    res.setHeader('content-type', 'text/html');
    res.end(form(req.method === 'POST' ? '<p class="error">Wrong user name or password.</p>' : ''));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('saved logins and key network scopes in the control panel', () => {
  let server: TestServer;
  let signIn: http.Server;
  let signInUrl = '';
  let browser: Browser;
  let page: Page;
  let accountId = '';
  let key = '';
  let email = '';

  const keysOf = async () => (await server.admin('GET', `/accounts/${accountId}/keys`)).body.keys as Array<{ name: string; network_scope: unknown }>;
  const loginsOf = async () => (await server.admin('GET', `/accounts/${accountId}/logins`)).body.logins as Array<{ id: string; name: string; type: string; state: string; last_error: string | null }>;
  const keyRow = (name: string) => page.getByRole('table', { name: /API keys of/ }).getByRole('row', { name: new RegExp(name) });
  const loginRow = (name: string) => page.getByRole('table', { name: /Saved logins of/ }).getByRole('row', { name: new RegExp(`^${name}`) });
  const newLogin = async () => {
    await page.getByRole('button', { name: 'New login' }).click();
    return page.getByRole('dialog', { name: `New login for ${email}` });
  };

  beforeAll(async () => {
    if (!fs.existsSync(path.resolve('dist/renderer/index.html'))) throw new Error('build the panel first: npm run build');
    await fsp.mkdir(ARTIFACTS, { recursive: true });
    signIn = await startRefusingSignIn();
    signInUrl = `http://127.0.0.1:${(signIn.address() as AddressInfo).port}/login`;
    server = await startTestServer({ ratePerSecond: 1000 });
    email = 'wiki-team@example.test';
    ({ accountId, key } = await server.account({ email }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: BASE_ARGS, timeout: 30_000 });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    await page.goto(server.srv.adminUrl);
    await page.getByRole('navigation', { name: 'Control panel' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    for (const close of [() => browser?.close(), () => server?.close(), () => new Promise((r) => signIn?.close(r))]) {
      try {
        await close();
      } catch {
        // already gone
      }
    }
  });

  describe('a key', () => {
    it('is created with a scope of 10.0.0.0/8 and wiki.corp.example, stored with it and shown in the table', async () => {
      await page.getByRole('button', { name: 'New key' }).click();
      const dialog = page.getByRole('dialog', { name: `New key for ${email}` });
      await dialog.getByLabel('Name', { exact: true }).fill('wiki-reader');
      expect(await dialog.getByRole('radio', { name: 'LAN (the account’s default)' }).isChecked()).toBe(true);
      await dialog.getByRole('radio', { name: 'Only these ranges and hosts' }).check();
      await dialog.getByLabel('Add a CIDR range or a host name').fill('10.0.0.0/8 wiki.corp.example');
      await dialog.getByLabel('Add a CIDR range or a host name').press('Enter');
      await shoot(page, 'key-scope');
      await dialog.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('dialog', { name: 'Your new API key' }).getByRole('button', { name: 'I have copied it' }).click();
      expect((await keysOf()).find((k) => k.name === 'wiki-reader')?.network_scope).toEqual(['10.0.0.0/8', 'wiki.corp.example']);
      const scope = keyRow('wiki-reader').getByRole('list', { name: 'Only these ranges and hosts' });
      await expect.poll(() => scope.innerText()).toMatch(/10\.0\.0\.0\/8\s+wiki\.corp\.example/);
      expect(await keyRow('test').getByRole('cell', { name: 'LAN', exact: true }).isVisible()).toBe(true);
    });

    it('shows a bad range at the field, and the server’s refusal of a scope there too', async () => {
      await keyRow('wiki-reader').getByRole('button', { name: 'Edit key wiki-reader' }).click();
      const dialog = page.getByRole('dialog', { name: /^Edit key/ });
      const entry = dialog.getByLabel('Add a CIDR range or a host name');
      await entry.fill('10.0.0.0/33');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => dialog.getByRole('alert').innerText()).toContain('In “10.0.0.0/33”, the prefix length after “/” must be a whole number from 0 to 32.');
      // 257 valid entries: past the most a scope holds, which only the server counts.
      await entry.fill(Array.from({ length: 257 }, (_, i) => `10.1.${i >> 8}.${i & 255}/32`).join(' '));
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => dialog.getByRole('alert').innerText()).toMatch(/^network_scope .*256/);
      expect((await keysOf()).find((k) => k.name === 'wiki-reader')?.network_scope).toEqual(['10.0.0.0/8', 'wiki.corp.example']);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    });

    it('is edited to public internet only', async () => {
      await keyRow('wiki-reader').getByRole('button', { name: 'Edit key wiki-reader' }).click();
      const dialog = page.getByRole('dialog', { name: /^Edit key/ });
      await dialog.getByRole('radio', { name: 'Public internet only' }).check();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => keyRow('wiki-reader').getByRole('cell', { name: 'Public internet only' }).isVisible()).toBe(true);
      expect((await keysOf()).find((k) => k.name === 'wiki-reader')?.network_scope).toBe('public');
    });

    it("starts with the account's default scope, which the account's form sets", async () => {
      const nav = page.getByRole('navigation', { name: 'Control panel' });
      await nav.getByRole('link', { name: 'Accounts' }).click();
      await page.getByRole('button', { name: `Edit ${email}` }).click();
      const form = page.getByRole('dialog', { name: `Edit ${email}` });
      expect(await form.getByRole('radio', { name: 'LAN' }).isChecked()).toBe(true);
      await form.getByRole('radio', { name: 'Public internet only' }).check();
      await form.getByRole('button', { name: 'Save' }).click();
      await form.waitFor({ state: 'detached' });
      expect((await server.admin('GET', `/accounts/${accountId}`)).body.default_network_scope).toBe('public');

      await nav.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('button', { name: 'New key' }).click();
      const dialog = page.getByRole('dialog', { name: `New key for ${email}` });
      expect(await dialog.getByRole('radio', { name: 'Public internet only (the account’s default)' }).isChecked()).toBe(true);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    });
  });

  describe('saved logins', () => {
    it('creates a form, a basic and a storage_state login, listed without any credential', async () => {
      let dialog = await newLogin();
      await dialog.getByLabel('Name', { exact: true }).fill('Wiki');
      await dialog.getByLabel('Sign-in page address').fill(signInUrl);
      await dialog.getByLabel('User name', { exact: true }).fill('alice');
      await dialog.getByLabel('Password', { exact: true }).fill(FORM_PASSWORD);
      expect(await dialog.getByLabel('Password', { exact: true }).getAttribute('type')).toBe('password');
      await dialog.getByRole('button', { name: 'Save login' }).click();
      await loginRow('Wiki').waitFor();

      dialog = await newLogin();
      await dialog.getByLabel('Name', { exact: true }).fill('Intranet');
      await dialog.getByLabel('Type').selectOption('basic');
      await dialog.getByLabel('Site').fill('http://127.0.0.1:8081');
      await dialog.getByLabel('User name', { exact: true }).fill('bob');
      await dialog.getByLabel('Password', { exact: true }).fill(BASIC_PASSWORD);
      await dialog.getByRole('button', { name: 'Save login' }).click();
      await loginRow('Intranet').waitFor();

      dialog = await newLogin();
      await dialog.getByLabel('Name', { exact: true }).fill('Grafana');
      await dialog.getByLabel('Type').selectOption('storage_state');
      // With a single-page app's cache beside the cookie: 600 KB, past the 256 KB of other admin bodies.
      const origins = [{ origin: 'https://grafana.corp.example', localStorage: [{ name: 'grafana.cache', value: 'c'.repeat(600_000) }] }];
      const state = { cookies: [{ name: 'sid', value: COOKIE_VALUE, domain: 'grafana.corp.example', path: '/', secure: true }], origins };
      await dialog.getByLabel('Or choose the file').setInputFiles({ name: 'state.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(state)) });
      await expect.poll(() => dialog.getByLabel('Session (Playwright storageState JSON)').inputValue()).toContain('grafana.corp.example');
      await dialog.getByRole('button', { name: 'Save login' }).click();
      await loginRow('Grafana').waitFor();

      const logins = await loginsOf();
      expect(logins.map((l) => [l.name, l.type, l.state])).toEqual([
        ['Wiki', 'form', 'new'],
        ['Intranet', 'basic', 'signed_in'],
        ['Grafana', 'storage_state', 'signed_in'],
      ]);
      const grafana = await loginRow('Grafana').innerText();
      expect(grafana).toContain('https://grafana.corp.example');
      expect(grafana).toMatch(/Signed in\s+signed in just now/);
      const shown = `${await page.content()}${await page.locator('body').innerText()}${JSON.stringify(logins)}`;
      for (const secret of [...SECRETS, 'alice']) expect(shown).not.toContain(secret);
    });

    it('gives credentials again to a login whose sign-in was refused', async () => {
      const wiki = (await loginsOf()).find((l) => l.name === 'Wiki')!;
      const { job_id } = await (await server.v1('POST', '/screenshot', key, { url: signInUrl, login: wiki.id })).json();
      expect((await waitForJob(server, key, job_id)).status).toBe('failed');
      expect((await loginsOf()).find((l) => l.id === wiki.id)).toMatchObject({ state: 'failed' });
      await page.reload();
      await expect.poll(() => loginRow('Wiki').getByText('Sign-in failed').isVisible()).toBe(true);
      expect(await loginRow('Wiki').innerText()).toContain('Wrong user name or password.');
      await shoot(page, 'logins');

      await loginRow('Wiki').getByRole('button', { name: 'Give credentials again for Wiki' }).click();
      const dialog = page.getByRole('dialog', { name: 'Give credentials again: Wiki' });
      await dialog.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD);
      await dialog.getByRole('button', { name: 'Save credentials' }).click();
      await expect.poll(() => loginRow('Wiki').getByText('Not signed in yet').isVisible()).toBe(true);
      expect((await loginsOf()).find((l) => l.id === wiki.id)).toMatchObject({ state: 'new', last_error: null });
      expect(await page.content()).not.toContain(NEW_PASSWORD);
    });

    it('deletes a login after asking', async () => {
      await loginRow('Intranet').getByRole('button', { name: 'Delete login Intranet' }).click();
      await page.getByRole('dialog', { name: 'Delete this login?' }).getByRole('button', { name: 'Delete login' }).click();
      await expect.poll(() => loginRow('Intranet').count()).toBe(0);
      expect((await loginsOf()).map((l) => l.name)).toEqual(['Wiki', 'Grafana']);
    });

    it("fits the keys and the logins into a phone's width, scrolling nothing sideways", async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        await expect.poll(() => loginRow('Wiki').isVisible()).toBe(true);
        const sideways = await page.evaluate(() => [document.documentElement, ...document.querySelectorAll('.table-wrap')].filter((e) => e.scrollWidth > e.clientWidth).length);
        expect(sideways).toBe(0);
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });
  });
});
