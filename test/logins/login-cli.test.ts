// The command line's saved logins: listed and removed through the running server, and named by
// `capture --login`.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli } from '../helpers/cli-process.js';
import { startTestServer, tempDir,type TestServer } from '../helpers/test-server.js';

const PASSWORD = 'cli-pw-5e1d0b';
let server: TestServer;
let key: string;
let accountId: string;
let site: http.Server;
let siteUrl: string;

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const open = req.headers.authorization === `Basic ${Buffer.from(`carol:${PASSWORD}`).toString('base64')}`;
    res.writeHead(open ? 200 : 401, { 'content-type': 'text/html' }).end(open ? '<p>open</p>' : '<p>closed</p>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key, accountId } = await server.account());
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => site?.close(resolve));
});

const createLogin = async () =>
  (await (await server.v1('POST', '/logins', key, { name: 'site', type: 'basic', site: siteUrl, username: 'carol', password: PASSWORD })).json()).id as string;

describe('screenshot-appliance login', () => {
  it("lists an account's logins without their credentials, and deletes one", async () => {
    const id = await createLogin();
    const listed = await runCli(['login', 'list', '--account', accountId, '--data', server.dataDir]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(PASSWORD);
    expect(JSON.parse(listed.stdout).map((l: { id: string }) => l.id)).toContain(id);
    const removed = await runCli(['login', 'delete', id, '--data', server.dataDir]);
    expect(removed.stdout.trim()).toBe(`removed ${id}`);
    expect((await server.v1('GET', `/logins/${id}`, key)).status).toBe(404);
  });

  it('creates a login from a file or standard input, never printing its password, and updates it', async () => {
    const dir = await tempDir('sa-login-cli-files-');
    const file = `${dir}/login.json`;
    fs.writeFileSync(file, JSON.stringify({ name: 'from-file', type: 'basic', site: siteUrl, username: 'carol', password: PASSWORD }));
    const fromFile = await runCli(['login', 'create', '--account', accountId, '--from', file, '--data', server.dataDir]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).not.toContain(PASSWORD);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ name: 'from-file', type: 'basic', site: siteUrl, state: 'signed_in' });

    const body = JSON.stringify({ name: 'from-stdin', type: 'basic', site: siteUrl, username: 'carol', password: PASSWORD });
    const fromStdin = await runCli(['login', 'create', '--account', accountId, '--from', '-', '--data', server.dataDir], body);
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    const { id } = JSON.parse(fromStdin.stdout);

    const state = `${dir}/state.json`;
    fs.writeFileSync(state, JSON.stringify({ cookies: [{ name: 'sid', value: 'abc', domain: '127.0.0.1', path: '/' }], origins: [] }));
    const imported = await runCli(['login', 'create', '--account', accountId, '--from', '-', '--storage-state', state, '--data', server.dataDir], '{"name": "imported", "type": "storage_state"}');
    expect(JSON.parse(imported.stdout)).toMatchObject({ name: 'imported', type: 'storage_state', site: 'http://127.0.0.1' });

    const renamed = await runCli(['login', 'update', id, '--from', '-', '--data', server.dataDir], '{"name": "renamed", "password": "another"}');
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(JSON.parse(renamed.stdout)).toMatchObject({ id, name: 'renamed' });

    const notJson = await runCli(['login', 'create', '--account', accountId, '--from', '-', '--data', server.dataDir], '{"name": ');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/--from - is not JSON/);
    const refused = await runCli(['login', 'create', '--account', accountId, '--from', '-', '--data', server.dataDir], '{"name": "x", "type": "basic"}');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/site is required for a basic login/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('captures a page with capture --login', async () => {
    const id = await createLogin();
    const out = await tempDir('sa-login-cli-');
    const captured = await runCli(['capture', `${siteUrl}/`, '--login', id, '--key', key, '--server', server.url, '--out', out, '--timeout', '60']);
    expect(captured.code, captured.stderr).toBe(0);
    expect(fs.existsSync(captured.stdout.trim())).toBe(true);
    const [job] = (await server.admin('GET', `/jobs?account_id=${accountId}&limit=1`)).body.jobs;
    expect(job).toMatchObject({ status: 'completed', http_status: 200 });
    fs.rmSync(out, { recursive: true, force: true });
  });
});
