import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CSRF_HEADER, CSRF_VALUE } from '../../server/api/admin-auth.js';
import { adminApiRouters as adminRoutes } from '../../server/app.js';
import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer,waitForJob } from '../helpers/test-server.js';
import { ContractChecker, observe } from './openapi-checker.js';

let server: TestServer;
let fixtures: FixtureServer;
let checker: ContractChecker;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer();
  const doc = await (await fetch(`${server.url}/admin/api/openapi.json`, { headers: { authorization: `Bearer ${server.srv.adminToken}` } })).json();
  checker = new ContractChecker(doc, '/admin/api');
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

/** Calls the admin API (with the bearer token unless `auth: false`) and checks the answer against the document. */
async function call(method: string, path: string, options: { body?: unknown; auth?: boolean; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth !== false) headers.authorization = `Bearer ${server.srv.adminToken}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const answer = await observe(server.url, method, `/admin/api${path}`, { headers, body });
  expect(checker.check(answer)).toEqual([]);
  return answer;
}

describe('the served admin document', () => {
  it('needs the admin token', async () => {
    expect((await call('GET', '/openapi.json', { auth: false })).status).toBe(401);
    const answer = await call('GET', '/openapi.json');
    expect(answer.json.servers).toEqual([{ url: `${server.url}/admin/api` }]);
  });

  it('describes every route the admin router registers, and nothing it does not', () => {
    const deps = { ...server.srv.services, trustProxy: [], token: 't', adminAllow: [], sessions: undefined as never };
    const routers = adminRoutes(deps);
    const registered = routers
      .flatMap((router) => router.stack)
      .filter((layer) => layer.methods.length > 0)
      .flatMap((layer) =>
        layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/^\/admin\/api/, '').replace(/:(\w+)/g, '{$1}')}`),
      );
    expect(registered.sort()).toEqual(checker.operations().sort());
  });
});

describe('admin answers match the OpenAPI document', () => {
  it('for the session: open, refuse, and close', async () => {
    const opened = await call('POST', '/session', { auth: false, body: { token: server.srv.adminToken } });
    expect(opened.status).toBe(204);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0];
    expect((await call('POST', '/session', { auth: false, body: { token: 'wrong' } })).status).toBe(401);
    expect((await call('POST', '/queue/pause', { auth: false, headers: { cookie } })).status).toBe(403);
    expect((await call('POST', '/queue/resume', { auth: false, headers: { cookie, [CSRF_HEADER]: CSRF_VALUE } })).status).toBe(200);
    expect((await call('DELETE', '/session', { auth: false })).status).toBe(204);
  });

  it('for accounts, their webhook secret and their keys', async () => {
    const created = await call('POST', '/accounts', { body: { email: 'contract@example.test', email_verified: true } });
    expect(created.status).toBe(201);
    const id = created.json.id;
    expect((await call('POST', '/accounts', { body: { email: 'not an address' } })).status).toBe(400);
    expect((await call('GET', '/accounts')).status).toBe(200);
    expect((await call('GET', `/accounts/${id}`)).status).toBe(200);
    expect((await call('GET', '/accounts/nope')).status).toBe(404);
    expect((await call('PATCH', `/accounts/${id}`, { body: { daily_limit: 5 } })).json.daily_limit).toBe(5);
    expect((await call('PATCH', `/accounts/${id}`, { body: { daily_limit: -1 } })).status).toBe(400);
    expect((await call('GET', `/accounts/${id}/webhook-secret`)).status).toBe(200);
    expect((await call('POST', `/accounts/${id}/webhook-secret`)).status).toBe(200);

    const key = await call('POST', `/accounts/${id}/keys`, { body: { name: 'ci', ip_whitelist: ['10.0.0.0/8', '2001:db8::/32'] } });
    expect(key.status).toBe(201);
    expect((await call('POST', `/accounts/${id}/keys`, { body: { ip_whitelist: ['300.1.1.1'] } })).status).toBe(400);
    expect((await call('GET', `/accounts/${id}/keys`)).json.keys).toHaveLength(1);
    expect((await call('GET', `/keys/${key.json.id}`)).status).toBe(200);
    expect((await call('POST', `/keys/${key.json.id}/signing-secret`)).json.signing_secret).toMatch(/^sas_/);
    const link = await call('POST', `/keys/${key.json.id}/render-link`, { body: { url: 'http://127.0.0.1:1/page', full_page: true } });
    expect(link.json.render_url).toMatch(/\/v1\/render\?.*signature=[0-9a-f]{64}$/);
    expect((await call('POST', `/keys/${key.json.id}/render-link`, { body: { url: 'ftp://x' } })).status).toBe(400);
    expect((await call('POST', '/keys/nope/signing-secret')).status).toBe(404);
    expect((await call('PATCH', `/keys/${key.json.id}`, { body: { revoked: true } })).json.revoked).toBe(true);
    expect((await call('DELETE', `/keys/${key.json.id}`)).status).toBe(204);
    expect((await call('GET', `/keys/${key.json.id}`)).status).toBe(404);
    expect((await call('DELETE', `/accounts/${id}`)).status).toBe(204);
  });

  it('for jobs, a job, its source, usage, status and the queue', async () => {
    const { key, accountId } = await server.account();
    const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, extract: ['markdown', 'metadata'] });
    const { job_id } = await res.json();
    await waitForJob(server, key, job_id);
    const failed = await (await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:1/' })).json();
    await waitForJob(server, key, failed.job_id);

    expect((await call('GET', `/jobs?account_id=${accountId}&limit=1`)).json.next_before).toBeTruthy();
    expect((await call('GET', '/jobs?status=completed')).status).toBe(200);
    expect((await call('GET', '/jobs?status=exploded')).status).toBe(400);
    expect((await call('GET', `/jobs/${job_id}`)).json.account_id).toBe(accountId);
    expect((await call('GET', `/jobs/${failed.job_id}`)).json.status).toBe('failed');
    expect((await call('GET', '/jobs/job_000000000000000000000000')).status).toBe(404);
    expect((await call('GET', `/jobs/${job_id}/source`)).body.toString()).toContain('Hello from the fixture');
    expect((await call('GET', `/jobs/${failed.job_id}/source`)).status).toBe(404);
    expect((await call('GET', `/jobs/${job_id}/markdown`)).body.toString()).toContain('Hello from the fixture');
    expect((await call('GET', `/jobs/${failed.job_id}/markdown`)).status).toBe(404);
    expect((await call('GET', '/usage?days=7')).json.days).toHaveLength(7);
    expect((await call('GET', `/usage?account_id=${accountId}`)).json.accounts).toEqual([]);
    expect((await call('GET', '/usage?days=0')).status).toBe(400);
    expect((await call('GET', '/status')).json.engine.ready).toBe(true);
    expect((await call('POST', '/queue/pause')).json.paused).toBe(true);
    expect((await call('POST', '/queue/resume')).json.paused).toBe(false);
  });

  it('for webhook deliveries: the list, a redelivery, and an unknown one', async () => {
    const received: string[] = [];
    const hooks = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(req.headers['webhook-id'] as string);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    try {
      const { key } = await server.account();
      const callback_url = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
      const { job_id } = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, callback_url })).json();
      await waitForJob(server, key, job_id);
      const deadline = Date.now() + 20_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const list = await call('GET', `/webhooks?job_id=${job_id}`);
      expect(list.json.deliveries).toHaveLength(1);
      const again = await call('POST', `/webhooks/${list.json.deliveries[0].id}/redeliver`);
      expect(again.json.attempts.length).toBeGreaterThanOrEqual(2);
      expect((await call('POST', '/webhooks/nope/redeliver')).status).toBe(404);
      expect((await call('GET', '/webhooks?limit=0')).status).toBe(400);
    } finally {
      hooks.closeAllConnections();
      await new Promise((resolve) => hooks.close(resolve));
    }
  });

  it('for monitors: create, list, change, run, checks, remove, and their refusals', async () => {
    const { accountId } = await server.account();
    const html = '<div style="width:200px;height:100px;background:#2060c0"></div>';
    const created = await call('POST', '/monitors', { body: { account_id: accountId, html, schedule: { every_minutes: 30 }, name: 'panel', propose_masks: false } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ account_id: accountId, name: 'panel' });
    const id = created.json.id;
    expect((await call('POST', '/monitors', { body: { account_id: 'nobody', html, schedule: { every_minutes: 30 } } })).status).toBe(404);
    expect((await call('POST', '/monitors', { body: { account_id: accountId, html, schedule: { every_minutes: 0 } } })).status).toBe(400);
    expect((await call('GET', '/monitors')).json.monitors.map((m: { id: string }) => m.id)).toContain(id);
    expect((await call('PATCH', `/monitors/${id}`, { body: { paused: true } })).json).toMatchObject({ paused: true, next_run_at: null });
    expect((await call('POST', `/monitors/${id}/proposed-masks/accept`)).json).toMatchObject({ proposed_masks: [], mask_rects: [] });
    expect((await call('POST', `/monitors/${id}/proposed-masks/reject`)).json).toMatchObject({ proposed_masks: [] });
    expect((await call('POST', '/monitors/mon_000000000000000000000000/proposed-masks/accept')).status).toBe(404);
    const run = await call('POST', `/monitors/${id}/run`);
    expect(run.status).toBe(201);
    const checks = await call('GET', `/monitors/${id}/checks`);
    expect(checks.json.checks[0].job_id).toBe(run.json.job_id);
    expect((await call('DELETE', `/monitors/${id}`)).status).toBe(204);
    expect((await call('GET', `/monitors/${id}/checks`)).status).toBe(404);
  });

  it("for an account's saved logins: a creation, a change, the list and a removal", async () => {
    const { accountId } = await server.account();
    const created = await call('POST', `/accounts/${accountId}/logins`, { body: { name: 'wiki', type: 'basic', site: 'http://127.0.0.1:9', username: 'u', password: 'p' } });
    expect(created.status).toBe(201);
    const { id } = created.json;
    expect((await call('POST', '/accounts/nope/logins', { body: { name: 'x', type: 'basic', site: 'http://127.0.0.1:9', username: 'u', password: 'p' } })).status).toBe(404);
    expect((await call('PATCH', `/logins/${id}`, { body: { name: 'wiki-renamed' } })).json).toMatchObject({ id, name: 'wiki-renamed' });
    expect((await call('PATCH', `/logins/${id}`, { body: { login_url: 'http://127.0.0.1:9/' } })).status).toBe(400);
    expect((await call('GET', `/accounts/${accountId}/logins`)).json.logins.map((l: { id: string }) => l.id)).toEqual([id]);
    expect((await call('GET', '/accounts/nope/logins')).status).toBe(404);
    expect((await call('DELETE', `/logins/${id}`)).status).toBe(204);
    expect((await call('DELETE', `/logins/${id}`)).status).toBe(404);
  });

  it("for an account's storage destination, and a job that asked for an upload", async () => {
    const { key, accountId } = await server.account();
    const destination = { endpoint: 'http://127.0.0.1:1', bucket: 'contract-bucket', access_key_id: 'AKIACONTRACT00000001', secret_access_key: 'contract-secret' };
    expect((await call('GET', `/accounts/${accountId}/storage`)).status).toBe(404);
    expect((await call('PUT', `/accounts/${accountId}/storage`, { body: { ...destination, bucket: 'No' } })).status).toBe(400);
    expect((await call('PUT', '/accounts/nope/storage', { body: destination })).status).toBe(404);
    expect((await call('PUT', `/accounts/${accountId}/storage`, { body: destination })).json.bucket).toBe('contract-bucket');
    expect((await call('GET', `/accounts/${accountId}/storage`)).json.access_key_id).toBe('AKIA…0001');
    // Nothing listens on port 1: the job completes with an upload_failed warning.
    const { job_id } = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, storage_path: '{job_id}.{ext}' })).json();
    await waitForJob(server, key, job_id);
    const job = await call('GET', `/jobs/${job_id}`);
    expect(job.json.options).toEqual({ upload: true, storage_path: '{job_id}.{ext}' });
    expect(job.json.warnings.map((w: { code: string }) => w.code)).toContain('upload_failed');
    expect((await call('DELETE', `/accounts/${accountId}/storage`)).status).toBe(204);
    expect((await call('DELETE', `/accounts/${accountId}/storage`)).status).toBe(404);
  });

  it("for batches: every account's newest, an archive, and an unknown one", async () => {
    const { key } = await server.account();
    const created = await server.v1('POST', '/batches', key, { items: [{ url: 'http://127.0.0.2:1/' }] });
    const { batch_id: id } = await created.json();
    await expect.poll(async () => (await call('GET', '/batches?limit=5')).json.batches.find((b: { batch_id: string }) => b.batch_id === id)?.status).toBe('completed');
    expect((await call('GET', '/batches?limit=0')).status).toBe(400);
    expect((await call('GET', `/batches/${id}/archive`)).status).toBe(200);
    expect((await call('GET', '/batches/batch_000000000000000000000000/archive')).status).toBe(404);
  });

  it('for settings', async () => {
    const current = await call('GET', '/settings');
    expect(current.status).toBe(200);
    expect((await call('PUT', '/settings', { body: { retention_days: current.json.retention_days } })).status).toBe(200);
    expect((await call('PUT', '/settings', { body: { retention_days: 0 } })).status).toBe(400);
    expect((await call('PUT', '/settings', { body: { colour: 'blue' } })).status).toBe(400);
  });

  it('for a request without the token, and a body that is not JSON', async () => {
    expect((await call('GET', '/accounts', { auth: false })).status).toBe(401);
    expect((await call('GET', '/accounts', { auth: false, headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await call('POST', '/accounts', { body: '{"email":' })).status).toBe(400);
  });

  it('has exercised every documented operation', () => {
    expect(checker.unexercised()).toEqual([]);
  });
});
