// Captures behind a sign-in page with saved logins, against a real wiki (DokuWiki from Debian's
// package, served by PHP on loopback) and a loopback fixture for HTTP Basic and an imported
// session. Sign-ins are counted at the wiki: each is one POST in PHP's access log.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { canonicalQuery, signCanonical } from '../../server/api/render-link.js';
import { backupDataDir } from '../../server/cli/backup.js';
import { SecretBox } from '../../server/crypto/secret-box.js';
import { appMissing } from '../helpers/apps.js';
import { captureLog } from '../helpers/capture-log.js';
import { filesHolding } from '../helpers/files-under.js';
import { SECRET_TEXT, type SignedInWiki, startSignedInWiki } from '../helpers/signed-in-wiki.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

const BASIC_PASSWORD = `basic-${crypto.randomBytes(6).toString('hex')}`;
const COOKIE_VALUE = `sid-${crypto.randomBytes(6).toString('hex')}`;
const TOKEN_VALUE = `token-${crypto.randomBytes(6).toString('hex')}`;

let wiki: SignedInWiki;
let fixture: http.Server;
let fixtureUrl: string;
/** Another origin, with a sign-in form of its own, that counts the requests carrying a body. */
let elsewhere: http.Server;
let elsewhereUrl: string;
let elsewherePosts = 0;
let server: TestServer;
let key: string;
let keyId: string;
let signingSecret: string;
const log = captureLog();
/** Every answer the tests read, to look for secrets in. */
const answers: string[] = [];

/** /basic needs the Basic credentials; /state shows whether the cookie and the localStorage item are there. */
function fixtureHandler(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.setHeader('content-type', 'text/html');
  if (req.url === '/moved-login') {
    res.writeHead(302, { location: `${elsewhereUrl}/login` }).end();
    return;
  }
  if (req.url === '/basic') {
    const expected = `Basic ${Buffer.from(`bob:${BASIC_PASSWORD}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="fixture"' }).end('<p>needs basic</p>');
      return;
    }
    res.end('<p>basic door open</p>');
    return;
  }
  const cookie = (req.headers.cookie ?? '').includes(`sid=${COOKIE_VALUE}`) ? 'cookie accepted' : 'no cookie';
  // The page never holds the token itself (its source is kept): it says how long the one it finds is.
  res.end(`<p>${cookie}</p><p id="token"></p><script>document.getElementById('token').textContent = 'stored token of ' + (localStorage.getItem('token') ?? '').length + ' characters';</script>`);
}

beforeAll(async () => {
  wiki = await startSignedInWiki();
  fixture = http.createServer(fixtureHandler);
  await new Promise<void>((resolve) => fixture.listen(0, '127.0.0.1', resolve));
  fixtureUrl = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  elsewhere = http.createServer((req, res) => {
    if (req.method === 'POST') elsewherePosts++;
    res.setHeader('content-type', 'text/html');
    res.end('<form method="post"><input name="u" type="text"><input name="p" type="password"><button type="submit">Sign in</button></form>');
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  server = await startTestServer({ ratePerSecond: 1000 }, { log: log.log });
  const { accountId } = await server.account();
  const created = await server.admin('POST', `/accounts/${accountId}/keys`, { name: 'logins' });
  ({ key, id: keyId, signing_secret: signingSecret } = created.body);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await wiki?.stop();
  await new Promise((resolve) => fixture?.close(resolve));
  await new Promise((resolve) => elsewhere?.close(resolve));
});

async function json(res: Response): Promise<any> {
  const text = await res.text();
  answers.push(text);
  return JSON.parse(text);
}

async function createLogin(body: Record<string, unknown>): Promise<string> {
  const res = await server.v1('POST', '/logins', key, body);
  expect(res.status).toBe(201);
  return (await json(res)).id;
}

/** A job of `url` with `login`, waited for, with its page source. */
async function capture(url: string, login: string): Promise<any> {
  const created = await json(await server.v1('POST', '/screenshot', key, { url, login }));
  expect(created.job_id, JSON.stringify(created)).toBeDefined();
  await waitForJob(server, key, created.job_id);
  return json(await server.v1('GET', `/screenshot/${created.job_id}?include_source=1`, key));
}

const wikiLogin = (password?: string) => wiki.login(password);
const securePage = () => wiki.securePage;

describe.skipIf(appMissing('dokuwiki'))('a saved form login on a real wiki', () => {
  let login: string;

  it('captures the signed-in page, signing in once for several jobs at once', async () => {
    login = await createLogin(wikiLogin());
    const jobs = await Promise.all([capture(securePage(), login), capture(securePage(), login), capture(securePage(), login)]);
    for (const job of jobs) {
      expect(job.status, job.error).toBe('completed');
      expect(job.page_source).toContain(SECRET_TEXT);
      expect((job.warnings ?? []).map((w: { code: string }) => w.code)).not.toContain('login_page');
    }
    expect(wiki.signIns()).toBe(1);
    const shown = await json(await server.v1('GET', `/logins/${login}`, key));
    expect(shown).toMatchObject({ state: 'signed_in', last_error: null });
    expect(shown.signed_in_at).not.toBeNull();
  });

  it('signs in again, once, after the wiki ended the session', async () => {
    wiki.endSessions();
    const job = await capture(securePage(), login);
    expect(job.status, job.error).toBe('completed');
    expect(job.page_source).toContain(SECRET_TEXT);
    expect(wiki.signIns()).toBe(2);
  });

  it('fails the job with a clear error when the password is wrong, and says so on the login', async () => {
    const wrong = await createLogin({ ...wikiLogin('not-the-password'), name: 'wrong' });
    const job = await capture(securePage(), wrong);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^The login "wrong" failed: the page still asks to sign in .*username or password was wrong/);
    const shown = await json(await server.v1('GET', `/logins/${wrong}`, key));
    expect(shown.state).toBe('failed');
    expect(shown.last_error).toContain('username or password was wrong');
  });

  it('does not try refused credentials again until they are changed', async () => {
    const wrong = await createLogin({ ...wikiLogin('still-not-it'), name: 'refused' });
    expect((await capture(securePage(), wrong)).status).toBe('failed');
    const tries = wiki.signIns();
    const again = await capture(securePage(), wrong);
    expect(again.error).toMatch(/^The login "refused" is not tried again: its last sign-in failed .*PATCH \/v1\/logins\//);
    expect(wiki.signIns()).toBe(tries);
    await json(await server.v1('PATCH', `/logins/${wrong}`, key, { password: wiki.password }));
    const fixed = await capture(securePage(), wrong);
    expect(fixed.status, fixed.error).toBe('completed');
    expect(wiki.signIns()).toBe(tries + 1);
  });
});

/** The job's page source, as its owner reads it. */
async function sourceOf(jobId: string): Promise<any> {
  await waitForJob(server, key, jobId);
  return json(await server.v1('GET', `/screenshot/${jobId}?include_source=1`, key));
}

describe.skipIf(appMissing('dokuwiki'))('a saved login named by a render link, an MCP call and a monitor', () => {
  let login: string;
  beforeAll(async () => {
    login = await createLogin({ ...wikiLogin(), name: 'everywhere' });
  });

  it('renders a signed link with a login as the signed-in page', async () => {
    const pairs: Array<[string, string]> = [
      ['url', securePage()],
      ['login', login],
      ['key_id', keyId],
    ];
    const res = await fetch(`${server.url}/v1/render?${canonicalQuery(pairs)}&signature=${signCanonical(signingSecret, canonicalQuery(pairs))}`);
    expect(res.status).toBe(200);
    expect((await sourceOf(res.headers.get('x-job-id')!)).page_source).toContain(SECRET_TEXT);
  });

  it('reads a page signed in through the MCP tool read_page', async () => {
    const client = new Client({ name: 'login-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/v1/mcp`), { requestInit: { headers: { 'X-API-Key': key } } }));
    try {
      const result = await client.callTool({ name: 'read_page', arguments: { url: securePage(), login } }, undefined, { timeout: 60_000 });
      expect(JSON.stringify(result.content)).toContain(SECRET_TEXT);
    } finally {
      await client.close();
    }
  });

  it('keeps a monitor of a signed-in page working across a session the wiki ended', async () => {
    const monitor = await json(await server.v1('POST', '/monitors', key, { url: securePage(), login, schedule: { every_minutes: 60 }, propose_masks: false }));
    expect(monitor.id, JSON.stringify(monitor)).toBeDefined();
    const first = await json(await server.v1('POST', `/monitors/${monitor.id}/run`, key));
    expect((await sourceOf(first.job_id)).page_source).toContain(SECRET_TEXT);
    const before = wiki.signIns();
    wiki.endSessions();
    const second = await json(await server.v1('POST', `/monitors/${monitor.id}/run`, key));
    const job = await sourceOf(second.job_id);
    expect(job.status, job.error).toBe('completed');
    expect(job.page_source).toContain(SECRET_TEXT);
    expect(wiki.signIns()).toBe(before + 1);
  });
});

describe('HTTP Basic and imported sessions', () => {
  it("sends a basic login's credentials to its site", async () => {
    const login = await createLogin({ name: 'door', type: 'basic', site: fixtureUrl, username: 'bob', password: BASIC_PASSWORD });
    const job = await capture(`${fixtureUrl}/basic`, login);
    expect(job.status, job.error).toBe('completed');
    expect(job.page_source).toContain('basic door open');
  });

  it("applies an imported storageState's cookies and localStorage before the page loads", async () => {
    const storage_state = {
      cookies: [{ name: 'sid', value: COOKIE_VALUE, domain: '127.0.0.1', path: '/', expires: -1, httpOnly: true, secure: false, sameSite: 'Lax' }],
      origins: [{ origin: fixtureUrl, localStorage: [{ name: 'token', value: TOKEN_VALUE }] }],
    };
    const login = await createLogin({ name: 'imported', type: 'storage_state', storage_state });
    const job = await capture(`${fixtureUrl}/state`, login);
    expect(job.status, job.error).toBe('completed');
    expect(job.page_source).toContain('cookie accepted');
    expect(job.page_source).toContain(`stored token of ${TOKEN_VALUE.length} characters`);
  });

  it.skipIf(appMissing('dokuwiki'))('fails the job when the wiki refuses an imported session, and the next at once until a fresh one is imported', async () => {
    const stale = { cookies: [{ name: 'DokuWiki', value: 'stale-session', domain: '127.0.0.1', path: '/' }], origins: [] };
    const login = await createLogin({ name: 'stale', type: 'storage_state', storage_state: stale });
    const job = await capture(securePage(), login);
    expect(job.status).toBe('failed');
    expect(job.error).toBe(`The imported session of the login "stale" was refused: ${securePage()} asks to sign in; import a fresh one (storage_state)`);
    const shown = await json(await server.v1('GET', `/logins/${login}`, key));
    expect(shown).toMatchObject({ state: 'failed', last_error: job.error });
    const wikiRequests = wiki.requests();
    const again = await capture(securePage(), login);
    expect(again.status).toBe('failed');
    expect(again.error).toContain(`The login "stale" is not used again: The imported session of the login "stale" was refused`);
    expect(wiki.requests()).toBe(wikiRequests);
    const fresh = { cookies: [{ name: 'sid', value: COOKIE_VALUE, domain: '127.0.0.1', path: '/' }], origins: [] };
    expect(await json(await server.v1('PATCH', `/logins/${login}`, key, { storage_state: fresh }))).toMatchObject({ state: 'signed_in', last_error: null });
    const renewed = await capture(`${fixtureUrl}/state`, login);
    expect(renewed.status, renewed.error).toBe('completed');
    expect(renewed.page_source).toContain('cookie accepted');
  });
});

describe('a sign-in page that moved to another site', () => {
  it('is not given the credentials, and the job says where it went', async () => {
    const login = await createLogin({ name: 'moved', type: 'form', login_url: `${fixtureUrl}/moved-login`, username: 'alice', password: wiki.password });
    const job = await capture(`${fixtureUrl}/state`, login);
    expect(job.status).toBe('failed');
    expect(job.error).toContain(`the page moved to ${elsewhereUrl}, which is not given the credentials`);
    expect(elsewherePosts).toBe(0);
  });
});

describe('secrets after jobs with logins', () => {
  it('leaves no password or session value readable in the data directory, a backup, the logs or any answer', async () => {
    const box = SecretBox.forDataDir(server.dataDir);
    const sessionValues: string[] = [];
    for (const name of fs.readdirSync(path.join(server.dataDir, 'login-secrets'))) {
      const opened = box.open<{ session?: { cookies: Array<{ value: string }> } }>(fs.readFileSync(path.join(server.dataDir, 'login-secrets', name), 'utf8'));
      sessionValues.push(...(opened.session?.cookies ?? []).map((c) => c.value).filter((v) => v.length >= 8));
    }
    // The wiki's own session was kept, so its values are among those looked for.
    expect(sessionValues.length).toBeGreaterThan(1);
    const archive = path.join(server.dataDir, '..', `backup-${crypto.randomBytes(4).toString('hex')}.tar.gz`);
    await backupDataDir(server.dataDir, archive);
    const backup = zlib.gunzipSync(fs.readFileSync(archive)).toString('latin1');
    fs.rmSync(archive);
    const logs = log.raw.join('');
    for (const secret of [wiki.password, BASIC_PASSWORD, COOKIE_VALUE, TOKEN_VALUE, ...sessionValues]) {
      expect(await filesHolding(server.dataDir, secret), secret).toEqual([]);
      expect(backup.includes(secret), `backup holds ${secret}`).toBe(false);
      expect(logs.includes(secret), `logs hold ${secret}`).toBe(false);
      expect(answers.some((a) => a.includes(secret)), `an answer holds ${secret}`).toBe(false);
    }
  });
});
