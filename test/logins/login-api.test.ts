import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { filesHolding, filesUnder } from '../helpers/files-under.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let key: string;
let accountId: string;
let other: string;

beforeAll(async () => {
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key, accountId } = await server.account());
  other = (await server.account()).key;
});
afterAll(async () => {
  await server?.close();
});

const PASSWORD = 'pw-7c1e9a-never-shown';
const form = { name: 'wiki', type: 'form', login_url: 'http://127.0.0.1:9/doku.php?do=login', username: 'alice-login', password: PASSWORD };
const create = async (body: Record<string, unknown>, as = key) => server.v1('POST', '/logins', as, body);
const VIEW_FIELDS = ['created_at', 'id', 'last_error', 'name', 'signed_in_at', 'site', 'state', 'type'];

describe('POST /v1/logins', () => {
  it('creates a form login and answers 201 with its name, site and state, never its credentials', async () => {
    const res = await create(form);
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('alice-login');
    const login = JSON.parse(text);
    expect(Object.keys(login).sort()).toEqual(VIEW_FIELDS);
    expect(login).toMatchObject({ name: 'wiki', type: 'form', site: 'http://127.0.0.1:9', state: 'new', signed_in_at: null, last_error: null });
    expect(login.id).toMatch(/^login_[0-9a-f]{24}$/);
  });

  it('creates a basic login for an origin and a storage_state login from a Playwright storageState', async () => {
    const basic = await (await create({ name: 'intranet', type: 'basic', site: 'http://127.0.0.1:8081', username: 'bob', password: PASSWORD })).json();
    expect(basic).toMatchObject({ type: 'basic', site: 'http://127.0.0.1:8081', state: 'signed_in' });
    const storage_state = { cookies: [{ name: 'sid', value: 'session-value-4d2b', domain: '127.0.0.1', path: '/' }], origins: [] };
    const imported = await (await create({ name: 'imported', type: 'storage_state', storage_state })).json();
    expect(imported).toMatchObject({ type: 'storage_state', site: 'http://127.0.0.1', state: 'signed_in' });
  });

  it.each([
    [{ ...form, type: 'oauth' }, 'type'],
    [{ ...form, password: undefined }, 'password'],
    [{ ...form, login_url: 'ftp://example.test/' }, 'login_url'],
    [{ name: 'b', type: 'basic', site: 'http://127.0.0.1:8081/path', username: 'u', password: 'p' }, 'site'],
    [{ name: 'b', type: 'basic', username: 'u', password: 'p' }, 'site'],
    [{ name: 's', type: 'storage_state', storage_state: { cookies: 'no' } }, 'storage_state'],
    [{ ...form, colour: 'red' }, 'colour'],
  ])('refuses %j with a 400 naming %s', async (body, field) => {
    const res = await create(body as Record<string, unknown>);
    expect(res.status).toBe(400);
    const answer = await res.json();
    expect(answer.error).toBe('Bad request');
    expect(answer.message).toContain(field);
  });
});

describe('GET, PATCH and DELETE /v1/logins/{id}', () => {
  it("lists the account's logins and shows one, without credentials", async () => {
    const login = await (await create({ ...form, name: 'listed' })).json();
    const list = await server.v1('GET', '/logins', key);
    const text = await list.text();
    expect(text).not.toContain(PASSWORD);
    expect(JSON.parse(text).logins.map((l: { id: string }) => l.id)).toContain(login.id);
    expect(await (await server.v1('GET', `/logins/${login.id}`, key)).json()).toEqual(login);
  });

  it("answers 404 for another account's login, to read, change or delete it", async () => {
    const login = await (await create({ ...form, name: 'mine' })).json();
    expect((await server.v1('GET', `/logins/${login.id}`, other)).status).toBe(404);
    expect((await server.v1('PATCH', `/logins/${login.id}`, other, { name: 'theirs' })).status).toBe(404);
    expect((await server.v1('DELETE', `/logins/${login.id}`, other)).status).toBe(404);
    expect((await (await server.v1('GET', '/logins', other)).json()).logins).toEqual([]);
  });

  it('renames a login and refuses a field of another type, naming it', async () => {
    const login = await (await create({ ...form, name: 'before' })).json();
    const renamed = await server.v1('PATCH', `/logins/${login.id}`, key, { name: 'after' });
    expect(await renamed.json()).toMatchObject({ id: login.id, name: 'after' });
    const wrong = await server.v1('PATCH', `/logins/${login.id}`, key, { site: 'http://127.0.0.1:1' });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).message).toContain('site');
  });

  it('deletes a login, after which it is 404 and its sealed secrets are gone from the data directory', async () => {
    const login = await (await create({ ...form, name: 'gone' })).json();
    const secretFile = path.join(server.dataDir, 'login-secrets', login.id);
    expect(await filesUnder(server.dataDir)).toContain(secretFile);
    expect((await server.v1('DELETE', `/logins/${login.id}`, key)).status).toBe(204);
    expect((await server.v1('GET', `/logins/${login.id}`, key)).status).toBe(404);
    expect(await filesUnder(server.dataDir)).not.toContain(secretFile);
  });

  it('keeps no password in clear anywhere in the data directory', async () => {
    await create({ ...form, name: 'sealed' });
    expect(await filesHolding(server.dataDir, PASSWORD)).toEqual([]);
  });
});

describe('a screenshot naming a login', () => {
  it("is refused with a 400 naming login when the login is not the account's", async () => {
    const login = await (await create({ ...form, name: 'private' }, other)).json();
    const res = await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:9/', login: login.id });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain('login');
  });
});

describe('a monitor naming a login', () => {
  it("is refused with a 400 naming login when the login is not the account's, and created with its own", async () => {
    const theirs = await (await create({ ...form, name: 'theirs' }, other)).json();
    const refused = await server.v1('POST', '/monitors', key, { url: 'http://127.0.0.1:9/', login: theirs.id, schedule: { every_minutes: 60 } });
    expect(refused.status).toBe(400);
    expect((await refused.json()).message).toContain('login');
    const mine = await (await create({ ...form, name: 'ours' })).json();
    const created = await server.v1('POST', '/monitors', key, { url: 'http://127.0.0.1:9/', login: mine.id, schedule: { every_minutes: 60 }, paused: true });
    expect(created.status).toBe(201);
    const changed = await server.v1('PATCH', `/monitors/${(await created.json()).id}`, key, { login: theirs.id });
    expect(changed.status).toBe(400);
  });

  it("is refused the same way when the admin creates or changes the monitor for an account", async () => {
    const theirs = await (await create({ ...form, name: 'theirs-admin' }, other)).json();
    const monitor = { account_id: accountId, url: 'http://127.0.0.1:9/', schedule: { every_minutes: 60 }, paused: true };
    const refused = await server.admin('POST', '/monitors', { ...monitor, login: theirs.id });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(theirs.id);
    const mine = await (await create({ ...form, name: 'ours-admin' })).json();
    const created = await server.admin('POST', '/monitors', { ...monitor, login: mine.id });
    expect(created.status).toBe(201);
    const changed = await server.admin('PATCH', `/monitors/${created.body.id}`, { login: theirs.id });
    expect(changed.status).toBe(400);
    expect(changed.body.message).toContain(theirs.id);
  });
});

describe('the admin API', () => {
  it("lists an account's logins and deletes one", async () => {
    const login = await (await create({ ...form, name: 'admin-seen' })).json();
    const list = await server.admin('GET', `/accounts/${accountId}/logins`);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(PASSWORD);
    expect(list.body.logins.map((l: { id: string }) => l.id)).toContain(login.id);
    expect((await server.admin('DELETE', `/logins/${login.id}`)).status).toBe(204);
    expect((await server.v1('GET', `/logins/${login.id}`, key)).status).toBe(404);
  });
});
