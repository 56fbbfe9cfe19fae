import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type FixtureServer,pngSize, startFixtureServer } from '../fixtures/fixture-server.js';
import { stillClock } from '../helpers/still-clock.js';
import { startTestServer, type TestServer,waitForJob } from '../helpers/test-server.js';

let server: TestServer;
const time = stillClock();
let fixtures: FixtureServer;
let key: string;
let accountId: string;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({}, { clock: time.clock });
});

// A fresh account per test keeps the per-second windows of one test out of the next.
beforeEach(async () => {
  ({ key, accountId } = await server.account());
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

const SPEC_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('POST /v1/screenshot', () => {
  it('answers 201 with the creation fields and a pending job', async () => {
    const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ status: 'pending', devices: ['desktop'], full_page: false, googlebot: false });
    expect(body.job_id).toMatch(/^job_[0-9a-f]{24}$/);
    expect(Number.isInteger(body.estimated_time_seconds) && body.estimated_time_seconds >= 1).toBe(true);
    expect(body.status_url).toBe(`${server.url}/v1/screenshot/${body.job_id}`);
    expect(body.jobs).toEqual([{ job_id: body.job_id, device: 'desktop', preset: 'desktop', status_url: body.status_url }]);
  });

  it('creates one job per device for all, in order, each with its preset', async () => {
    const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, devices: ['all'] });
    const body = await res.json();
    expect(body.devices).toEqual(['desktop', 'tablet', 'mobile']);
    expect(body.jobs.map((j: { preset: string }) => j.preset)).toEqual(['desktop', 'tablet_landscape', 'mobile']);
    expect(body.job_id).toBe(body.jobs[0].job_id);
    const ended = await Promise.all(body.jobs.map((j: { job_id: string }) => waitForJob(server, key, j.job_id)));
    const sizes = await Promise.all(
      ended.map(async (job) => pngSize(Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer()))),
    );
    expect(sizes).toEqual([
      { width: 1920, height: 1080 },
      { width: 2048, height: 1536 },
      { width: 1170, height: 2532 },
    ]);
  });

  it('answers 400 naming the field for invalid parameters, and creates no job', async () => {
    const before = (await (await server.v1('GET', '/usage', key)).json()).calls_today;
    for (const [body, field] of [
      [{ url: 'example.com' }, 'url'],
      [{ url: `${fixtures.url}/small.html`, devices: ['watch'] }, 'devices'],
      [{ url: `${fixtures.url}/small.html`, fullpage: true }, 'fullpage'],
      [{ url: `${fixtures.url}/small.html`, width: 10 }, 'width'],
    ] as const) {
      const res = await server.v1('POST', '/screenshot', key, body);
      expect(res.status).toBe(400);
      const err = await res.json();
      expect(err.error).toBe('Bad request');
      expect(err.message).toContain(field);
    }
    const after = (await (await server.v1('GET', '/usage', key)).json()).calls_today;
    expect(after).toBe(before);
  });

  it('answers 400 for a body that is not JSON or not sent as JSON', async () => {
    const broken = await server.v1('POST', '/screenshot', key, '{"url": ', { 'content-type': 'application/json' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toEqual({ error: 'Bad request', message: 'The request body is not valid JSON' });
    const form = await server.v1('POST', '/screenshot', key, 'url=http://a.test', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(400);
    expect((await form.json()).message).toMatch(/Content-Type must be application\/json/);
  });

  it('answers 413 for a body over 11 MB (room for a 5 MB html escaped in JSON)', async () => {
    const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, pad: 'x'.repeat(11 * 1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe('Payload too large');
  });
});

describe('GET /v1/screenshot/{job_id}', () => {
  it('follows a job from pending to completed with every field and its presence rule', async () => {
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
    const first = await (await server.v1('GET', `/screenshot/${created.job_id}`, key)).json();
    expect(['pending', 'processing', 'completed']).toContain(first.status);
    expect(first.created_at).toMatch(SPEC_TIME);
    const job = await waitForJob(server, key, created.job_id);
    expect(Object.keys(job).sort()).toEqual(
      [
        ...['job_id', 'status', 'progress', 'url', 'preset', 'full_page', 'googlebot', 'created_at', 'screenshot_url', 'completed_at', 'has_page_source'],
        ...['http_status', 'final_url', 'page_title', 'warnings'],
      ].sort(),
    );
    expect(job.warnings).toEqual([]);
    expect(job).toMatchObject({ status: 'completed', progress: 100, url: `${fixtures.url}/small.html`, preset: 'desktop', has_page_source: true });
    expect(job).toMatchObject({ http_status: 200, final_url: `${fixtures.url}/small.html`, page_title: 'Small page' });
    expect(job.completed_at).toMatch(SPEC_TIME);
    expect(job.screenshot_url).toMatch(new RegExp(`^${server.url}/v1/files/[A-Za-z0-9_-]{24}\\.png$`));
  });

  it('returns page_source only with include_source=1', async () => {
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
    await waitForJob(server, key, created.job_id);
    const plain = await (await server.v1('GET', `/screenshot/${created.job_id}`, key)).json();
    expect(plain).not.toHaveProperty('page_source');
    const withSource = await (await server.v1('GET', `/screenshot/${created.job_id}?include_source=1`, key)).json();
    expect(withSource.page_source).toContain('Hello from the fixture');
    expect((await (await server.v1('GET', `/screenshot/${created.job_id}?include_source=true`, key)).json()).page_source).toBe(withSource.page_source);
    for (const off of ['0', 'false']) {
      expect(await (await server.v1('GET', `/screenshot/${created.job_id}?include_source=${off}`, key)).json()).not.toHaveProperty('page_source');
    }
  });

  it('refuses an include_source that is not 1, true, 0 or false with 400 naming it', async () => {
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
    for (const bad of ['yes', 'TRUE', '2', '', 'on', '1&include_source=1']) {
      const answer = await server.v1('GET', `/screenshot/${created.job_id}?include_source=${bad}`, key);
      expect(answer.status, bad).toBe(400);
      expect(await answer.json()).toMatchObject({ error: 'Bad request', message: expect.stringContaining('include_source') });
    }
  });

  it('captures the full page height of a tall page', async () => {
    const created = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/tall.html?h=4000`, full_page: true, devices: ['desktop'] })
    ).json();
    expect(created.full_page).toBe(true);
    const job = await waitForJob(server, key, created.job_id);
    expect(job.full_page).toBe(true);
    const png = Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer());
    expect(pngSize(png)).toEqual({ width: 1920, height: 4000 });
  });

  it('sends the Googlebot smartphone user agent with the real Chromium version for mobile', async () => {
    const created = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/ua?mobile-bot`, devices: ['mobile'], googlebot: true })
    ).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job).toMatchObject({ status: 'completed', googlebot: true, preset: 'mobile' });
    const ua = fixtures.seen('/ua?mobile-bot')[0].userAgent;
    expect(ua).toMatch(/Googlebot\/2\.1/);
    expect(ua).toMatch(/Mobile Safari/);
    expect(ua).toContain(`Chrome/${server.srv.services.engine.chromiumVersion()}`);
  });

  it('sends a mobile browser user agent for mobile without googlebot', async () => {
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/ua?plain-mobile`, devices: ['mobile'] })).json();
    await waitForJob(server, key, created.job_id);
    const ua = fixtures.seen('/ua?plain-mobile')[0].userAgent;
    expect(ua).toMatch(/Android .* Mobile Safari/);
    expect(ua).not.toMatch(/Googlebot|HeadlessChrome/);
  });

  it('fails a job whose page cannot be reached, with progress 0 and an error message', async () => {
    const created = await (await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:9/nothing' })).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job).toMatchObject({ status: 'failed', progress: 0 });
    expect(job.error).toMatch(/127\.0\.0\.1:9/);
    expect(job).not.toHaveProperty('screenshot_url');
    expect(job).not.toHaveProperty('completed_at');
  });

  it('answers 404 for an unknown job and for another account\'s job', async () => {
    const other = await server.account();
    const created = await (await server.v1('POST', '/screenshot', other.key, { url: `${fixtures.url}/small.html` })).json();
    for (const id of ['job_000000000000000000000000', created.job_id]) {
      const res = await server.v1('GET', `/screenshot/${id}`, key);
      expect(res.status).toBe(404);
      expect((await res.json()).error).toBe('Not found');
    }
  });
});

describe('GET /v1/usage', () => {
  it('reports calls today and this month, the limits and the next reset', async () => {
    const fresh = await server.account({ daily_limit: 50, monthly_limit: 500 });
    await server.v1('POST', '/screenshot', fresh.key, { url: `${fixtures.url}/small.html`, devices: ['desktop', 'mobile'] });
    const res = await server.v1('GET', '/usage', fresh.key);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ calls_today: 2, calls_this_month: 2, daily_limit: 50, monthly_limit: 500 });
    expect(body.reset_at).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00Z$/);
  });
});

describe('authentication', () => {
  it('answers 401 without a key and with an invalid one', async () => {
    const missing = await server.v1('GET', '/usage', undefined);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ error: 'Unauthorized' });
    expect(missing.headers.get('x-ratelimit-limit')).toBeNull();
    const wrong = await server.v1('GET', '/usage', 'sa_notARealKey');
    expect(wrong.status).toBe(401);
  });

  it('answers 403 IP not allowed naming the caller address', async () => {
    const fenced = await server.account({}, { ip_whitelist: ['10.0.0.0/8', '2001:db8::/32'] });
    const res = await server.v1('GET', '/usage', fenced.key);
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error).toBe('IP not allowed');
    expect(body.message).toContain('127.0.0.1');
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('admits a caller inside the whitelist', async () => {
    const fenced = await server.account({}, { ip_whitelist: ['2001:db8::/32', '127.0.0.0/8'] });
    expect((await server.v1('GET', '/usage', fenced.key)).status).toBe(200);
  });

  it('answers 403 Email not verified for an unverified account', async () => {
    const unverified = await server.account({ email_verified: false });
    const res = await server.v1('GET', '/usage', unverified.key);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'Email not verified', message: expect.stringMatching(/verify/i) });
  });

  it('answers 403 access denied for an account without the Super User plan', async () => {
    const basic = await server.account({ plan: 'basic' });
    const res = await server.v1('GET', '/usage', basic.key);
    expect(res.status).toBe(403);
    expect((await res.json()).error).toBe('Access denied');
  });

  it('answers 401 for a revoked key', async () => {
    const acc = await server.account();
    await server.admin('PATCH', `/keys/${acc.keyId}`, { revoked: true });
    expect((await server.v1('GET', '/usage', acc.key)).status).toBe(401);
  });
});

describe('limits', () => {
  it('carries the rate-limit headers on every response for an identified key', async () => {
    const acc = await server.account({ daily_limit: 7 });
    const res = await server.v1('GET', '/usage', acc.key);
    expect(res.headers.get('x-ratelimit-limit')).toBe('7');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('7');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(reset % 86400).toBe(0);
    expect(reset * 1000).toBeGreaterThan(Date.now());
    const created = await server.v1('POST', '/screenshot', acc.key, { url: `${fixtures.url}/small.html`, devices: ['all'] });
    expect(created.headers.get('x-ratelimit-remaining')).toBe('4');
    const notFound = await server.v1('GET', '/screenshot/job_x', acc.key);
    expect(notFound.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('answers 429 past the daily limit with retry_after and Retry-After, refusing the request whole', async () => {
    const acc = await server.account({ daily_limit: 2 });
    const ok = await server.v1('POST', '/screenshot', acc.key, { url: `${fixtures.url}/small.html` });
    expect(ok.status).toBe(201);
    const res = await server.v1('POST', '/screenshot', acc.key, { url: `${fixtures.url}/small.html`, devices: ['desktop', 'mobile'] });
    expect(res.status).toBe(429);
    const body = await res.json();
    expect(body).toMatchObject({ error: 'Rate limit exceeded', message: expect.stringContaining('2 requests per day') });
    expect(Number.isInteger(body.retry_after) && body.retry_after >= 1).toBe(true);
    expect(res.headers.get('retry-after')).toBe(String(body.retry_after));
    expect(res.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await (await server.v1('GET', '/usage', acc.key)).json()).calls_today).toBe(1);
  });

  it('answers 429 past 10 requests per second and admits exactly ten of a burst', async () => {
    const acc = await server.account();
    const statuses = await time.still(() => Promise.all(Array.from({ length: 15 }, () => server.v1('GET', '/usage', acc.key).then((r) => r.status))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });
});

describe('files', () => {
  it('serves the image without a key, with content type, ETag and caching, and 304 on a match', async () => {
    const created = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, format: 'jpeg', quality: 60 })
    ).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job.screenshot_url).toMatch(/\.jpg$/);
    const res = await fetch(job.screenshot_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const etag = res.headers.get('etag');
    expect(etag).toBeTruthy();
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const again = await fetch(job.screenshot_url, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect((await fetch(job.screenshot_url.replace(/[A-Za-z0-9_-]{24}/, 'A'.repeat(24)))).status).toBe(404);
  });
});

describe('operator endpoints', () => {
  it('answers /healthz and /readyz without a key', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('answers unknown paths with a 404 error body and wrong methods with 405', async () => {
    const res = await fetch(`${server.url}/v2/screenshot`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'Not found' });
    const wrong = await server.v1('DELETE', '/usage', key);
    expect(wrong.status).toBe(405);
    expect((await wrong.json()).error).toBe('Method not allowed');
  });

  it('keeps the account id private in job resources', async () => {
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
    const job = await (await server.v1('GET', `/screenshot/${created.job_id}`, key)).json();
    expect(JSON.stringify(job)).not.toContain(accountId);
  });
});
