import fs from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { risingClock } from '../helpers/rising-clock.js';
import { startTestServer, tempDir, testServerForFile } from '../helpers/test-server.js';

// Lists newest first by creation time: jobs posted one after another must be stamped in that
// order even when a fast machine creates them in one millisecond.
const server = testServerForFile({}, { clock: risingClock() });

describe('admin API access', () => {
  it('answers 401 without the admin token and with a wrong one', async () => {
    expect((await fetch(`${server.url}/admin/api/accounts`)).status).toBe(401);
    const wrong = await fetch(`${server.url}/admin/api/accounts`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'Unauthorized' });
  });

  it('exchanges the token for an HttpOnly SameSite=Strict session cookie', async () => {
    const res = await fetch(`${server.url}/admin/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: server.srv.adminToken }),
    });
    expect(res.status).toBe(204);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/sa_admin=/);
    expect(cookie).toMatch(/httponly/i);
    expect(cookie).toMatch(/samesite=strict/i);
    const session = cookie.split(';')[0];
    expect((await fetch(`${server.url}/admin/api/accounts`, { headers: { cookie: session } })).status).toBe(200);
  });

  it('refuses a cookie-authenticated change without the cross-site request header', async () => {
    const res = await fetch(`${server.url}/admin/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: server.srv.adminToken }),
    });
    const session = (res.headers.get('set-cookie') ?? '').split(';')[0];
    const body = JSON.stringify({ email: 'csrf@example.test' });
    const forged = await fetch(`${server.url}/admin/api/accounts`, {
      method: 'POST',
      headers: { cookie: session, 'content-type': 'application/json' },
      body,
    });
    expect(forged.status).toBe(403);
    const real = await fetch(`${server.url}/admin/api/accounts`, {
      method: 'POST',
      headers: { cookie: session, 'content-type': 'application/json', 'x-requested-with': 'screenshot-appliance' },
      body,
    });
    expect(real.status).toBe(201);
  });

  it('ends the session at sign-out: its cookie opens nothing after, while other sessions go on', async () => {
    const signIn = async () => {
      const res = await fetch(`${server.url}/admin/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: server.srv.adminToken }),
      });
      // It lasts as long as the session: 12 hours.
      const expires = Date.parse(/expires=([^;]+)/i.exec(res.headers.get('set-cookie')!)![1]);
      expect(Math.abs(expires - (Date.now() + 12 * 3_600_000))).toBeLessThan(60_000);
      return res.headers.get('set-cookie')!.split(';')[0];
    };
    const first = await signIn();
    const second = await signIn();
    // Each sign-in is a session of its own, never a value derived from the token.
    expect(first).not.toBe(second);
    const accounts = (cookie: string) => fetch(`${server.url}/admin/api/accounts`, { headers: { cookie } });
    expect((await accounts(first)).status).toBe(200);

    const out = await fetch(`${server.url}/admin/api/session`, { method: 'DELETE', headers: { cookie: first, 'x-requested-with': 'screenshot-appliance' } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/sa_admin=;/);
    // A copy of the cookie kept from before the sign-out (another tab, a stolen copy) is refused.
    expect((await accounts(first)).status).toBe(401);
    expect((await accounts(second)).status).toBe(200);
    // A made-up or emptied cookie opens nothing.
    expect((await accounts('sa_admin=')).status).toBe(401);
    expect((await accounts(`sa_admin=${first.slice('sa_admin='.length, -1)}`)).status).toBe(401);
  });

  it('refuses a wrong token at the session exchange', async () => {
    const res = await fetch(`${server.url}/admin/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'guess' }),
    });
    expect(res.status).toBe(401);
  });
});

describe('admin sessions across a token change', () => {
  it('refuses every earlier session once the admin token is rotated and the server restarted', async () => {
    const dataDir = await tempDir();
    const signIn = async (url: string, token: string) =>
      (await fetch(`${url}/admin/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) }))
        .headers.get('set-cookie')!
        .split(';')[0];
    const first = await startTestServer({ dataDir });
    const cookie = await signIn(first.url, first.srv.adminToken);
    expect((await fetch(`${first.url}/admin/api/accounts`, { headers: { cookie } })).status).toBe(200);
    await first.srv.close();

    // The rotation of docs/security.md: a new token in <data>/admin-token, then a restart.
    const rotated = 'r'.repeat(43);
    await fs.writeFile(path.join(dataDir, 'admin-token'), `${rotated}\n`);
    const second = await startTestServer({ dataDir });
    try {
      expect(second.srv.adminToken).toBe(rotated);
      expect((await fetch(`${second.url}/admin/api/accounts`, { headers: { cookie } })).status).toBe(401);
      const fresh = await signIn(second.url, rotated);
      expect((await fetch(`${second.url}/admin/api/accounts`, { headers: { cookie: fresh } })).status).toBe(200);
    } finally {
      await second.close();
    }
  }, 60_000);
});

describe('accounts', () => {
  it('creates, reads, updates and deletes an account', async () => {
    const created = await server.admin('POST', '/accounts', { email: 'Crud@Example.test' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: 'crud@example.test',
      email_verified: false,
      plan: 'super_user',
      daily_limit: 1000,
      monthly_limit: 30000,
      calls_today: 0,
      calls_this_month: 0,
    });
    expect(created.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const id = created.body.id;
    const patched = await server.admin('PATCH', `/accounts/${id}`, { email_verified: true, daily_limit: 5, plan: 'basic' });
    expect(patched.body).toMatchObject({ email_verified: true, daily_limit: 5, plan: 'basic' });
    expect((await server.admin('GET', '/accounts')).body.accounts.map((a: { id: string }) => a.id)).toContain(id);
    expect((await server.admin('DELETE', `/accounts/${id}`)).status).toBe(204);
    expect((await server.admin('GET', `/accounts/${id}`)).status).toBe(404);
  });

  it('answers 400 naming the field for bad input', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ email: 'not-an-email' }, /email/],
      [{ email: 'admin@example.test\u202Etset.elpmaxe' }, /email must not contain control characters/],
      [{ email: 'a\u2066b@example.test' }, /email must not contain/],
      [{ email: 'a\u200Bb@example.test' }, /email must not contain/],
      [{ email: 'a\u0007b@example.test' }, /email must not contain/],
      [{ email: 'a\u0085b@example.test' }, /email/],
      [{ email: 'a@b.test', plan: 'gold' }, /plan/],
      [{ email: 'a@b.test', daily_limit: -1 }, /daily_limit/],
      [{ email: 'a@b.test', email_verified: 'yes' }, /email_verified/],
      [{ email: 'a@b.test', colour: 'red' }, /colour/],
    ];
    for (const [body, message] of cases) {
      const res = await server.admin('POST', '/accounts', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Bad request');
      expect(res.body.message).toMatch(message);
    }
  });

  it('keeps e-mail addresses unique', async () => {
    await server.admin('POST', '/accounts', { email: 'dup@example.test' });
    const again = await server.admin('POST', '/accounts', { email: 'DUP@example.test' });
    expect(again.status).toBe(400);
  });

  it('makes one account of several requests for one address at once, and answers the others 400', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => server.admin('POST', '/accounts', { email: 'race@example.test' })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 400, 400, 400, 400, 400]);
    for (const refused of answers.filter((a) => a.status === 400)) expect(refused.body).toMatchObject({ error: 'Bad request', message: expect.stringMatching(/race@example\.test already has an account/) });
    const all = (await server.admin('GET', '/accounts')).body.accounts as Array<{ email: string }>;
    expect(all.filter((a) => a.email === 'race@example.test')).toHaveLength(1);
  });

  it('reveals and rotates the webhook secret', async () => {
    const { accountId } = await server.account();
    const first = await server.admin('GET', `/accounts/${accountId}/webhook-secret`);
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const rotated = await server.admin('POST', `/accounts/${accountId}/webhook-secret`);
    expect(rotated.body.secret).not.toBe(first.body.secret);
    expect(await server.srv.services.accounts.signingSecrets(accountId)).toEqual([rotated.body.secret, first.body.secret]);
  });
});

describe('API keys', () => {
  it('shows a key once at creation and never again', async () => {
    const { accountId } = await server.account();
    const created = await server.admin('POST', `/accounts/${accountId}/keys`, { name: 'ci', ip_whitelist: ['10.0.0.0/8'] });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^sa_[A-Za-z0-9_-]{43}$/);
    expect(created.body.prefix).toBe(created.body.key.slice(0, 9));
    const listed = await server.admin('GET', `/accounts/${accountId}/keys`);
    const again = await server.admin('GET', `/keys/${created.body.id}`);
    expect(JSON.stringify([listed.body, again.body])).not.toContain(created.body.key);
    expect(again.body).toMatchObject({ name: 'ci', ip_whitelist: ['10.0.0.0/8'], revoked: false, last_used_at: null });
  });

  it('stores only a hash of the key', async () => {
    const { key, keyId } = await server.account();
    const stored = await server.srv.services.stores.keys.get(keyId);
    expect(JSON.stringify(stored)).not.toContain(key.slice(3));
    expect(stored!.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses an invalid whitelist entry naming it, and accepts IPv6 ranges', async () => {
    const { keyId } = await server.account();
    const bad = await server.admin('PATCH', `/keys/${keyId}`, { ip_whitelist: ['10.0.0.1', '10.0.0.0/40'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('10.0.0.0/40');
    const good = await server.admin('PATCH', `/keys/${keyId}`, { ip_whitelist: ['2001:db8::/48', '::ffff:192.0.2.1'] });
    expect(good.body.ip_whitelist).toEqual(['2001:db8::/48', '192.0.2.1']);
  });

  it('records when a key was last used', async () => {
    const { key, keyId } = await server.account();
    await server.v1('GET', '/usage', key);
    // Written after the answer, so read until it shows rather than after a guessed pause.
    await expect.poll(async () => (await server.admin('GET', `/keys/${keyId}`)).body.last_used_at, { timeout: 10_000 }).toMatch(/Z$/);
  });
});

describe('jobs, usage, settings and status', () => {
  it('lists job history newest first with paging and filters', async () => {
    const { key, accountId } = await server.account();
    for (let i = 0; i < 3; i++) await server.v1('POST', '/screenshot', key, { url: `http://127.0.0.1:9/${i}` });
    const page = await server.admin('GET', `/jobs?account_id=${accountId}&limit=2`);
    expect(page.body.jobs).toHaveLength(2);
    expect(page.body.jobs[0].url).toBe('http://127.0.0.1:9/2');
    expect(page.body.jobs[0]).toMatchObject({ account_id: accountId, device: 'desktop', format: 'png' });
    const rest = await server.admin('GET', `/jobs?account_id=${accountId}&limit=2&before=${page.body.next_before}`);
    expect(rest.body.jobs.map((j: { url: string }) => j.url)).toEqual(['http://127.0.0.1:9/0']);
    expect((await server.admin('GET', '/jobs?status=done')).status).toBe(400);
  });

  it('reports per-day usage for charts', async () => {
    const { key, accountId } = await server.account();
    await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:9/', devices: ['all'] });
    const usage = await server.admin('GET', `/usage?account_id=${accountId}&days=7`);
    expect(usage.body.days).toHaveLength(7);
    expect(usage.body.days[6].count).toBe(3);
  });

  it('saves settings, applies them and refuses invalid ones naming the field', async () => {
    const saved = await server.admin('PUT', '/settings', { concurrency: 3, retention_days: 14, egress_allow: ['127.0.0.1/32', '10.1.0.0/16'] });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ concurrency: 3, retention_days: 14, egress_allow: ['127.0.0.1', '10.1.0.0/16'] });
    expect(server.srv.services.queue.stats().concurrency).toBe(3);
    const bad = await server.admin('PUT', '/settings', { concurrency: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/concurrency/);
    expect((await server.admin('PUT', '/settings', { turbo: true })).body.message).toMatch(/turbo/);
    await server.admin('PUT', '/settings', { concurrency: 2 });
  });

  it('reports queue and engine status and pauses and resumes the queue', async () => {
    const status = await server.admin('GET', '/status');
    expect(status.body.engine.ready).toBe(true);
    expect(status.body.engine.version).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(status.body.engine).toMatchObject({ browsers: 2, browsers_ready: 2 });
    expect(status.body.captures_per_hour).toHaveLength(24);
    expect(status.body.api_base_url).toBe(`${server.url}/v1`);
    expect(status.body.evidence_public_key).toBe((await (await fetch(`${server.url}/v1/evidence/public-key`)).json()).public_key);
    expect((await server.admin('POST', '/queue/pause')).body.paused).toBe(true);
    expect((await server.admin('POST', '/queue/resume')).body.paused).toBe(false);
  });
});
