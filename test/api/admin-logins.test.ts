import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ContractChecker, observe } from '../contract/openapi-checker.js';
import { filesHolding } from '../helpers/files-under.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// The admin API's side of saved logins, which the control panel calls: an account's login made
// and changed by the admin, with the body and answer of /v1/logins, and never a credential shown.

let server: TestServer;
let key: string;
let accountId: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ key, accountId } = await server.account());
});
afterAll(async () => {
  await server?.close();
});

const PASSWORD = 'admin-pw-5e0c2d-never-shown';
const form = { name: 'wiki', type: 'form', login_url: 'http://127.0.0.1:9/doku.php?do=login', username: 'carol-login', password: PASSWORD };
const VIEW_FIELDS = ['created_at', 'id', 'last_error', 'name', 'signed_in_at', 'site', 'state', 'type'];

describe('POST /admin/api/accounts/:id/logins', () => {
  it("creates a login for the account, answers 201 with its view only, and the account's keys see it", async () => {
    const created = await server.admin('POST', `/accounts/${accountId}/logins`, form);
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(VIEW_FIELDS);
    expect(created.body).toMatchObject({ name: 'wiki', type: 'form', site: 'http://127.0.0.1:9', state: 'new' });
    expect(JSON.stringify(created.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(created.body)).not.toContain('carol-login');
    expect(await (await server.v1('GET', `/logins/${created.body.id}`, key)).json()).toEqual(created.body);
  });

  it('creates a basic login and a storage_state login as POST /v1/logins does', async () => {
    const basic = await server.admin('POST', `/accounts/${accountId}/logins`, { name: 'intranet', type: 'basic', site: 'http://127.0.0.1:8081', username: 'bob', password: PASSWORD });
    expect(basic.body).toMatchObject({ type: 'basic', site: 'http://127.0.0.1:8081', state: 'signed_in' });
    const storage_state = { cookies: [{ name: 'sid', value: 'admin-session-9a1f', domain: 'wiki.corp.example', path: '/', secure: true }] };
    const imported = await server.admin('POST', `/accounts/${accountId}/logins`, { name: 'imported', type: 'storage_state', storage_state });
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ type: 'storage_state', site: 'https://wiki.corp.example', state: 'signed_in' });
    expect(JSON.stringify(imported.body)).not.toContain('admin-session-9a1f');
  });

  it('takes an imported session as large as /v1/logins takes, past the other admin bodies\' 256 KB', async () => {
    // A single-page app's localStorage (cached data beside its token) passes 256 KB easily.
    const cache = 'x'.repeat(900_000);
    const storage_state = { cookies: [], origins: [{ origin: 'https://grafana.corp.example', localStorage: [{ name: 'cache', value: cache }] }] };
    const big = await server.admin('POST', `/accounts/${accountId}/logins`, { name: 'large session', type: 'storage_state', storage_state });
    expect(big.status).toBe(201);
    expect((await server.admin('PATCH', `/logins/${big.body.id}`, { storage_state })).status).toBe(200);
    // Every other admin body keeps its bound.
    const note = await server.admin('PATCH', `/accounts/${accountId}`, { name: 'x'.repeat(300_000) });
    expect(note.status).toBe(413);
  });

  it('refuses a login missing its password with a 400 naming the field', async () => {
    const res = await server.admin('POST', `/accounts/${accountId}/logins`, { ...form, password: undefined });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'Bad request' });
    expect(res.body.message).toContain('password');
  });

  it('answers 404 for an account that does not exist, and saves nothing', async () => {
    const res = await server.admin('POST', '/accounts/nobody/logins', { ...form, name: 'orphan' });
    expect(res.status).toBe(404);
    const names = (await server.admin('GET', `/accounts/${accountId}/logins`)).body.logins.map((l: { name: string }) => l.name);
    expect(names).not.toContain('orphan');
  });
});

describe('the admin document', () => {
  it('describes the answers of both routes', async () => {
    const auth = { authorization: `Bearer ${server.srv.adminToken}`, 'content-type': 'application/json' };
    const doc = await (await fetch(`${server.url}/admin/api/openapi.json`, { headers: auth })).json();
    const checker = new ContractChecker(doc, '/admin/api');
    const created = await observe(server.url, 'POST', `/admin/api/accounts/${accountId}/logins`, { headers: auth, body: JSON.stringify({ ...form, name: 'documented' }) });
    expect(created.status).toBe(201);
    expect(checker.check(created)).toEqual([]);
    const changed = await observe(server.url, 'PATCH', `/admin/api/logins/${created.json.id}`, { headers: auth, body: JSON.stringify({ password: 'x' }) });
    expect(changed.status).toBe(200);
    expect(checker.check(changed)).toEqual([]);
    expect(checker.check(await observe(server.url, 'PATCH', '/admin/api/logins/nope', { headers: auth, body: '{"name":"x"}' }))).toEqual([]);
  });
});

describe('PATCH /admin/api/logins/:id', () => {
  it("changes any account's login; new credentials make a form login sign in afresh", async () => {
    const { id } = (await server.admin('POST', `/accounts/${accountId}/logins`, { ...form, name: 'to change' })).body;
    const renamed = await server.admin('PATCH', `/logins/${id}`, { name: 'changed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id, name: 'changed', state: 'new' });
    const again = await server.admin('PATCH', `/logins/${id}`, { username: 'carol', password: `${PASSWORD}-2` });
    expect(again.body).toMatchObject({ id, state: 'new', signed_in_at: null, last_error: null });
    expect(JSON.stringify(again.body)).not.toContain(PASSWORD);
  });

  it('refuses a field of another type of login with a 400 naming it', async () => {
    const { id } = (await server.admin('POST', `/accounts/${accountId}/logins`, { ...form, name: 'a form' })).body;
    const res = await server.admin('PATCH', `/logins/${id}`, { site: 'http://127.0.0.1:1' });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('site');
  });

  it('answers 404 for a login that does not exist', async () => {
    expect((await server.admin('PATCH', '/logins/login_000000000000000000000000', { name: 'x' })).status).toBe(404);
  });

  it('keeps no password given through the admin API in clear in the data directory', async () => {
    expect(await filesHolding(server.dataDir, PASSWORD)).toEqual([]);
  });
});
