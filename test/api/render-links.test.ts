import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Clock } from '../../server/time.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// Render links through a real server and real Chromium. Links are signed here as
// docs/render-links.md tells a client to, not with the service's own code, so a change of the canonical form fails.

let fixtures: FixtureServer;
let server: TestServer;
/** Added to the real time: moves the service past a cache_ttl without waiting. */
let skewMs = 0;
const clock: Clock = { now: () => Date.now() + skewMs };

interface Signer {
  accountId: string;
  key: string;
  keyId: string;
  secret: string;
}

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ ratePerSecond: 100 }, { clock });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

/** An account with a key; the signing secret as key creation returned it. */
async function signer(account: Record<string, unknown> = {}, keyFields: Record<string, unknown> = {}): Promise<Signer> {
  const created = await server.admin('POST', '/accounts', { email: `r${crypto.randomUUID()}@example.test`, email_verified: true, ...account });
  const key = await server.admin('POST', `/accounts/${created.body.id}/keys`, { name: 'render', ...keyFields });
  expect(key.body.signing_secret).toMatch(/^sas_[A-Za-z0-9_-]{43}$/);
  return { accountId: created.body.id, key: key.body.key, keyId: key.body.id, secret: key.body.signing_secret };
}

/** The recipe of docs/render-links.md: every parameter but signature, encoded, sorted by name, joined with &, HMAC-SHA256 hex. */
function sign(params: Record<string, string>, secret: string): string {
  const canonical = Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .sort()
    .join('&');
  return crypto.createHmac('sha256', secret).update(canonical).digest('hex');
}

/** A signed link, its parameters written in the order given (order must not matter). */
function link(s: Signer, params: Record<string, string>, signature = sign({ ...params, key_id: s.keyId }, s.secret)): string {
  const query = new URLSearchParams({ ...params, key_id: s.keyId, signature });
  return `${server.url}/v1/render?${query}`;
}

const page = (tag: string) => `${fixtures.url}/small.html?${tag}`;

async function usage(s: Signer): Promise<number> {
  return (await (await server.v1('GET', '/usage', s.key)).json()).calls_today;
}

describe('a render link', () => {
  it('answers the picture of a signed link, whatever the order and encoding of its parameters', async () => {
    const s = await signer();
    const params = { url: page('a b+c/é'), devices: 'mobile', format: 'png' };
    const res = await fetch(link(s, params));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('x-cache')).toBe('miss');
    expect(res.headers.get('cache-control')).toMatch(/^private, max-age=(3599|3600)$/);
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{24}"$/);
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    // The mobile preset: 390 CSS px at scale 3.
    expect(meta.width).toBe(1170);

    // The same parameters in another order, with + for the spaces and an uppercase signature.
    const signature = sign({ ...params, key_id: s.keyId }, s.secret).toUpperCase();
    const reordered = `${server.url}/v1/render?signature=${signature}&format=png&key_id=${s.keyId}&devices=mobile&url=${encodeURIComponent(params.url).replace(/%20/g, '+')}`;
    const again = await fetch(reordered);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-cache')).toBe('hit');
    expect(again.headers.get('etag')).toBe(res.headers.get('etag'));
  });

  it('refuses a changed, added, missing or foreign signature with 403, and an unknown or revoked key with 401', async () => {
    const s = await signer();
    const other = await signer();
    const params = { url: page('refusals') };
    const good = link(s, params);
    const variants: Array<[string, string, number]> = [
      ['a parameter changed', good.replace('refusals', 'refusalz'), 403],
      ['a parameter added', `${good}&full_page=true`, 403],
      ['a parameter removed', good.replace(/url=[^&]*&/, ''), 403],
      ['no signature', good.replace(/&signature=[0-9a-f]+/, ''), 403],
      ['an empty signature', good.replace(/signature=[0-9a-f]+/, 'signature='), 403],
      ['a truncated signature', good.slice(0, -2), 403],
      ["another key's secret", link(s, params, sign({ ...params, key_id: s.keyId }, other.secret)), 403],
      ["another key's id with this signature", good.replace(`key_id=${s.keyId}`, `key_id=${other.keyId}`), 403],
      ['the API key in place of the secret', link(s, params, sign({ ...params, key_id: s.keyId }, s.key)), 403],
      ['an unknown key', good.replace(`key_id=${s.keyId}`, 'key_id=nokey'), 401],
      ['no key', good.replace(`key_id=${s.keyId}&`, ''), 401],
      ['a parameter given twice', `${good}&url=${encodeURIComponent(page('x'))}`, 400],
    ];
    for (const [what, url, status] of variants) {
      const res = await fetch(url);
      expect(res.status, what).toBe(status);
      const body = await res.json();
      if (status === 403) expect(body.error, what).toBe('Invalid signature');
      // Nobody without a good signature learns the account's usage.
      expect(res.headers.get('x-ratelimit-remaining'), what).toBeNull();
    }
    expect(await usage(s)).toBe(0);

    const expired = { ...params, expires: String(Math.floor(clock.now() / 1000) - 1) };
    const late = await fetch(link(s, expired));
    expect(late.status).toBe(403);
    expect((await late.json()).error).toBe('Link expired');

    await server.admin('PATCH', `/keys/${s.keyId}`, { revoked: true });
    const revoked = await fetch(good);
    expect(revoked.status).toBe(401);
    expect((await revoked.json()).message).toBe('Invalid API key');
  });

  it('stops working when the secret is rotated, and works signed with the new one', async () => {
    const s = await signer();
    const params = { url: page('rotate'), cache_ttl: '0' };
    expect((await fetch(link(s, params))).status).toBe(200);
    const rotated = await server.admin('POST', `/keys/${s.keyId}/signing-secret`);
    expect(rotated.body.signing_secret).toMatch(/^sas_/);
    expect((await fetch(link(s, params))).status).toBe(403);
    expect((await fetch(link({ ...s, secret: rotated.body.signing_secret }, params))).status).toBe(200);
  });

  it("applies the key's whitelist, the e-mail check and the plan as POST does", async () => {
    const fenced = await signer({}, { ip_whitelist: ['10.0.0.0/8'] });
    const fencedRes = await fetch(link(fenced, { url: page('fenced') }));
    expect(fencedRes.status).toBe(403);
    expect((await fencedRes.json()).error).toBe('IP not allowed');

    const unverified = await signer({ email_verified: false });
    expect((await (await fetch(link(unverified, { url: page('unverified') }))).json()).error).toBe('Email not verified');
    const basic = await signer({ plan: 'basic' });
    expect((await (await fetch(link(basic, { url: page('basic') }))).json()).error).toBe('Access denied');
  });

  it('answers 202 with the status address when the capture outlasts render_timeout, and 502 for a failed capture', async () => {
    const s = await signer();
    const slow = await fetch(link(s, { url: page('slow'), delay: '3000', render_timeout: '1' }));
    expect(slow.status).toBe(202);
    const body = await slow.json();
    expect(body.status_url).toContain(`/v1/screenshot/${body.job_id}`);
    expect(Number(slow.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const failed = await fetch(link(s, { url: 'http://127.0.0.1:1/nothing' }));
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ error: 'Capture failed', message: expect.stringContaining('127.0.0.1:1') });
  });

  it('reads options from the query and refuses bad ones naming the field', async () => {
    const s = await signer();
    const full = await fetch(link(s, { url: `${fixtures.url}/tall.html?h=3000`, full_page: 'true', format: 'jpeg', quality: '50', clip: '' }));
    expect(full.status).toBe(400);
    expect((await full.json()).message).toMatch(/clip/);
    const ok = await fetch(link(s, { url: `${fixtures.url}/tall.html?h=3000`, full_page: 'true', format: 'jpeg', quality: '50' }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('image/jpeg');
    expect((await sharp(Buffer.from(await ok.arrayBuffer())).metadata()).height).toBe(3000);

    const refusals: Array<[Record<string, string>, string]> = [
      [{ url: page('r'), devices: 'desktop,mobile' }, 'devices'],
      [{ url: page('r'), full_page: 'maybe' }, 'full_page'],
      [{ url: page('r'), headers: '{not json' }, 'headers'],
      [{ url: page('r'), cache_ttl: String(31 * 86_400) }, 'cache_ttl'],
      [{ url: page('r'), render_timeout: '61' }, 'render_timeout'],
      [{ url: page('r'), colour: 'red' }, 'colour'],
      [{ url: 'javascript:alert(1)' }, 'url'],
      [{ url: page('r'), clip: '{"x":0}' }, 'clip'],
    ];
    for (const [params, field] of refusals) {
      const res = await fetch(link(s, params));
      expect(res.status, field).toBe(400);
      expect((await res.json()).message, field).toContain(field);
    }
  });
});

describe('what a render link may carry', () => {
  it('refuses headers, cookies and http_auth with 400 naming the field, signed or made by the panel', async () => {
    const s = await signer();
    const secrets: Record<string, string> = {
      headers: JSON.stringify({ Authorization: 'Bearer page-token' }),
      cookies: JSON.stringify([{ name: 'session', value: 'cookie-value' }]),
      http_auth: JSON.stringify({ username: 'ann', password: 'pw' }),
    };
    for (const [field, value] of Object.entries(secrets)) {
      const res = await fetch(link(s, { url: page(`secret-${field}`), [field]: value }));
      expect(res.status, field).toBe(400);
      const body = await res.json();
      expect(body.error, field).toBe('Bad request');
      expect(body.message, field).toMatch(new RegExp(`^${field} cannot be given in a render link`));
      // The panel does not sign such a link either.
      const made = await server.admin('POST', `/keys/${s.keyId}/render-link`, { url: page('panel'), [field]: JSON.parse(value) });
      expect(made.status, field).toBe(400);
      expect(made.body.message, field).toContain(field);
    }
    expect(await usage(s)).toBe(0);
    const jobs = await server.admin('GET', `/jobs?account_id=${s.accountId}`);
    expect(jobs.body.jobs).toEqual([]);
  });

  it('refuses extract with 400 naming it, signed or made by the panel: a link answers with the picture only', async () => {
    const s = await signer();
    for (const value of ['markdown', JSON.stringify(['text', 'links'])]) {
      const res = await fetch(link(s, { url: page('extract'), extract: value }));
      expect(res.status, value).toBe(400);
      expect((await res.json()).message).toMatch(/^extract cannot be given in a render link: .*POST \/v1\/screenshot/);
    }
    const made = await server.admin('POST', `/keys/${s.keyId}/render-link`, { url: page('panel'), extract: ['markdown'] });
    expect(made.status).toBe(400);
    expect(made.body.message).toMatch(/^extract cannot be given in a render link/);
    expect(await usage(s)).toBe(0);
  });

  it('refuses a user name or password in url with 400 pointing to http_auth, in a link and in a POST body', async () => {
    const s = await signer();
    const base = new URL(fixtures.url);
    const urls = [
      `http://ann:pw@${base.host}/small.html`,
      `http://ann@${base.host}/small.html`,
      `http://:pw@${base.host}/small.html`,
      `HTTP://ann:pw@${base.host}/small.html`,
      `http://ann%40corp:pw@${base.host}/small.html`,
      `http:\\\\ann:pw@${base.host}\\small.html`,
    ];
    for (const url of urls) {
      const viaLink = await fetch(link(s, { url }));
      expect(viaLink.status, url).toBe(400);
      expect((await viaLink.json()).message, url).toMatch(/^url may not contain a user name or password.*http_auth/);
      const viaPost = await server.v1('POST', '/screenshot', s.key, { url });
      expect(viaPost.status, url).toBe(400);
      expect((await viaPost.json()).message, url).toMatch(/^url may not contain a user name or password.*http_auth/);
    }
    const jobs = await server.admin('GET', `/jobs?account_id=${s.accountId}`);
    expect(jobs.body.jobs).toEqual([]);
  });
});

describe("the README's recipes", () => {
  const readme = fs.readFileSync('docs/render-links.md', 'utf8');

  it('signs a link in the shell with openssl that the service accepts, for a URL needing every kind of escape', async () => {
    const script = /<!-- render-link-shell -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(script).toBeDefined();
    const s = await signer();
    const url = execFileSync('bash', ['-c', script!], {
      env: { ...process.env, KEY_ID: s.keyId, SIGNING_SECRET: s.secret, BASE: server.url, PAGE: page("shell é+&=/ !'()*~") },
      encoding: 'utf8',
    }).trim();
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
  });

  it('signs a link with the Node function', async () => {
    const code = /```js\n(import crypto[\s\S]*?function renderLink[\s\S]*?\n})\n/.exec(readme)?.[1];
    expect(code).toBeDefined();
    const s = await signer();
    const module = `${code!}\nexport { renderLink };\n`;
    const { renderLink } = await import(`data:text/javascript,${encodeURIComponent(module)}`);
    const res = await fetch(renderLink(server.url, s.keyId, s.secret, { url: page('node ü'), full_page: true }));
    expect(res.status).toBe(200);
  });
});

describe('the result cache', () => {
  it('serves a hit without a capture or a counted call until cache_ttl passes, then captures again', async () => {
    const s = await signer();
    const params = { url: page('ttl'), cache_ttl: '60' };
    const first = await fetch(link(s, params));
    expect(first.headers.get('x-cache')).toBe('miss');
    expect(await usage(s)).toBe(1);

    skewMs += 30_000;
    const hit = await fetch(link(s, params));
    expect(hit.headers.get('x-cache')).toBe('hit');
    expect(hit.headers.get('x-job-id')).toBe(first.headers.get('x-job-id'));
    // What is left of the 60 s.
    expect(Number(hit.headers.get('cache-control')!.split('=')[1])).toBeLessThanOrEqual(30);
    const notModified = await fetch(link(s, params), { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(notModified.status).toBe(304);
    expect(await usage(s)).toBe(1);

    // Another option, another result.
    expect((await fetch(link(s, { ...params, dark_mode: 'true' }))).headers.get('x-cache')).toBe('miss');
    expect(await usage(s)).toBe(2);

    skewMs += 31_000;
    const stale = await fetch(link(s, params));
    expect(stale.headers.get('x-cache')).toBe('miss');
    expect(stale.headers.get('etag')).not.toBe(first.headers.get('etag'));
    expect(await usage(s)).toBe(3);

    // cache_ttl=0 never serves a stored result.
    expect((await fetch(link(s, { ...params, cache_ttl: '0' }))).headers.get('x-cache')).toBe('miss');
    expect((await fetch(link(s, { ...params, cache_ttl: '0' }))).headers.get('x-cache')).toBe('miss');
    expect(await usage(s)).toBe(5);
  });

  it('captures once for identical requests arriving together, and counts one call', async () => {
    const s = await signer();
    const params = { url: page('together'), delay: '1500' };
    const answers = await Promise.all(Array.from({ length: 6 }, () => fetch(link(s, params))));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((r) => r.headers.get('x-job-id'))).size).toBe(1);
    expect(answers.filter((r) => r.headers.get('x-cache') === 'miss')).toHaveLength(1);
    const counted = await server.srv.services.metrics.registry.getSingleMetricAsString('screenshot_result_cache_total');
    expect(counted).toMatch(/result="hit"\} [1-9]/);
    expect(await usage(s)).toBe(1);
    const jobs = await server.admin('GET', `/jobs?account_id=${s.accountId}`);
    expect(jobs.body.jobs).toHaveLength(1);
  });

  it('keeps accounts, and requests with other secrets, apart', async () => {
    const a = await signer();
    const b = await signer();
    const params = { url: page('apart'), cache_ttl: '600' };
    const fromA = await fetch(link(a, params));
    const fromB = await fetch(link(b, params));
    expect(fromB.headers.get('x-cache')).toBe('miss');
    expect(fromB.headers.get('x-job-id')).not.toBe(fromA.headers.get('x-job-id'));

    // Secrets travel only in POST bodies (a link refuses them); the cache keeps them apart there.
    const withHeader = async (value: string) => {
      const res = await server.v1('POST', '/screenshot', a.key, { url: page('apart'), cache_ttl: 600, headers: { 'X-Token': value } });
      return (await res.json()).cached;
    };
    expect(await withHeader('one')).toBe(false);
    expect(await withHeader('two')).toBe(false);
    expect(await withHeader('one')).toBe(true);
    // The stored cache key says nothing of the header's value.
    const stored = await server.srv.services.stores.jobs.list({ account_id: a.accountId, limit: 1000 });
    expect(JSON.stringify(stored)).not.toMatch(/"one"|"two"/);
  });

  it('serves a hit when the daily limit is reached, and refuses what would be a new capture', async () => {
    const s = await signer({ daily_limit: 1 });
    const params = { url: page('limit') };
    expect((await fetch(link(s, params))).status).toBe(200);
    const hit = await fetch(link(s, params));
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-cache')).toBe('hit');
    expect((await fetch(link(s, { url: page('limit-2') }))).status).toBe(429);
  });

  it('says cached: true on POST /v1/screenshot with cache_ttl, per device, counting only new captures', async () => {
    const s = await signer();
    const post = async (body: Record<string, unknown>) => (await server.v1('POST', '/screenshot', s.key, body)).json();
    const plain = await post({ url: page('post') });
    expect(plain.cached).toBeUndefined();

    const first = await post({ url: page('post'), devices: ['desktop'], cache_ttl: 300 });
    expect(first.cached).toBe(false);
    expect(first.jobs[0].cached).toBe(false);
    const both = await post({ url: page('post'), devices: ['desktop', 'tablet'], cache_ttl: 300 });
    expect(both.job_id).toBe(first.job_id);
    expect(both.cached).toBe(true);
    expect(both.jobs.map((j: { cached: boolean }) => j.cached)).toEqual([true, false]);
    // plain, first, and the tablet job of both.
    expect(await usage(s)).toBe(3);
  });
});
