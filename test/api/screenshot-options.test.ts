import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLogger } from '../../server/logger.js';
import { type Canary, startCanary } from '../egress/canary.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';

// The capture options through the API: each refused with a 400 naming its field when invalid,
// carried to the capture, shown back (and sent in the webhook) without their secrets, and never
// written down in clear.

let fixtures: FixtureServer;
let server: TestServer;
let key: string;
const logged: string[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(chunk.toString('utf8'));
      done();
    },
  });
  server = await startTestServer({}, { log: createLogger({ level: 'debug', destination: destination as unknown as NodeJS.WritableStream, pretty: false }) });
  ({ key } = await server.account());
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

/** A POST /v1/screenshot that waits out the per-second limit (Retry-After) instead of failing on it. */
async function postJob(body: Record<string, unknown>): Promise<Response> {
  for (;;) {
    const res = await server.v1('POST', '/screenshot', key, body);
    if (res.status !== 429) return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

const post = (body: Record<string, unknown>) => postJob({ url: `${fixtures.url}/opt/colors.html`, ...body });

describe('POST /v1/screenshot options', () => {
  const refusals: Array<[string, Record<string, unknown>, string, RegExp?]> = [
    ['wait_until of another value', { wait_until: 'idle' }, 'wait_until'],
    ['settle_timeout over 30000', { settle_timeout: 30_001 }, 'settle_timeout'],
    ['a negative settle_timeout', { settle_timeout: -1 }, 'settle_timeout'],
    ['a settle_timeout that is not whole', { settle_timeout: 1.5 }, 'settle_timeout'],
    ['delay over 10000', { delay: 10_001 }, 'delay'],
    ['a negative delay', { delay: -1 }, 'delay'],
    ['a clip without its height', { clip: { x: 0, y: 0, width: 10 } }, 'clip'],
    ['a clip of width 0', { clip: { x: 0, y: 0, width: 0, height: 10 } }, 'clip'],
    ['scale above 3', { scale: 3.5 }, 'scale'],
    ['scale below 1', { scale: 0.5 }, 'scale'],
    ['an empty hide_selectors', { hide_selectors: [] }, 'hide_selectors'],
    ['styles over 64 KB of UTF-8 in fewer characters', { styles: 'é'.repeat(40_000) }, 'styles', /at most 65536 bytes/],
    ['scripts over 64 KB', { scripts: 'x'.repeat(65_537) }, 'scripts'],
    ['a Host header', { headers: { Host: 'example.com' } }, 'headers', /may not set Host/],
    ['a hop-by-hop header in any case', { headers: { 'TRANSFER-ENCODING': 'chunked' } }, 'headers'],
    ['a Proxy-* header', { headers: { 'Proxy-Authorization': 'Basic x' } }, 'headers'],
    ['a header name that is no token', { headers: { 'Bad Name': 'x' } }, 'headers'],
    ['a header value with a line break', { headers: { 'X-A': 'a\r\nX-B: b' } }, 'headers', /control characters/],
    ['a cookie without a name', { cookies: [{ value: 'v' }] }, 'cookies'],
    ['a same_site None cookie that is not secure', { cookies: [{ name: 'a', value: 'b', same_site: 'None' }] }, 'cookies'],
    ['user_agent with googlebot', { user_agent: 'X/1', googlebot: true }, 'user_agent'],
    ['an unknown time zone', { timezone: 'Mars/Olympus_Mons' }, 'timezone'],
    ['a malformed locale', { locale: 'not a locale' }, 'locale'],
    ['selector with clip', { selector: '#red', clip: { x: 0, y: 0, width: 1, height: 1 } }, 'clip'],
    ['selector with full_page', { selector: '#red', full_page: true }, 'selector'],
    ['clip with format pdf', { clip: { x: 0, y: 0, width: 1, height: 1 }, format: 'pdf' }, 'clip'],
    ['quality with format pdf', { quality: 50, format: 'pdf' }, 'quality'],
    ['http_auth without a password', { http_auth: { username: 'u' } }, 'http_auth'],
    ['a boolean option given as text', { dark_mode: 'yes' }, 'dark_mode'],
    ['block_ads given as a number', { block_ads: 1 }, 'block_ads', /true or false/],
    ['block_trackers given as text', { block_trackers: 'true' }, 'block_trackers', /true or false/],
    ['block_cookie_banners given as null', { block_cookie_banners: null }, 'block_cookie_banners', /true or false/],
    ['reduced_motion given as text', { reduced_motion: 'reduce' }, 'reduced_motion', /true or false/],
    ['fail_on_http_error given as text', { fail_on_http_error: 'yes' }, 'fail_on_http_error', /true or false/],
    ['media_type of another value', { media_type: 'tv' }, 'media_type'],
    ['an empty wait_for_selector', { wait_for_selector: '' }, 'wait_for_selector', /non-empty string/],
    ['a wait_for_selector that is no string', { wait_for_selector: ['#a'] }, 'wait_for_selector'],
    ['an empty selector', { selector: '' }, 'selector', /non-empty string/],
    ['a selector over 1024 characters', { selector: `#${'a'.repeat(1024)}` }, 'selector', /longer than 1024/],
    ['an empty click_selector', { click_selector: '' }, 'click_selector', /non-empty string/],
    ['empty styles', { styles: '' }, 'styles', /non-empty string/],
    ['empty scripts', { scripts: '' }, 'scripts', /non-empty string/],
    ['a cookie domain with a scheme', { cookies: [{ name: 'a', value: 'b', domain: 'http://example.com' }] }, 'cookies', /cookies\[0\]\.domain/],
    ['a cookie domain with a port', { cookies: [{ name: 'a', value: 'b', domain: 'example.com:8080' }] }, 'cookies', /cookies\[0\]\.domain/],
    ['a cookie domain with a space', { cookies: [{ name: 'a', value: 'b', domain: 'exa mple.com' }] }, 'cookies', /cookies\[0\]\.domain/],
    ['a cookie path not starting with /', { cookies: [{ name: 'a', value: 'b', path: 'docs' }] }, 'cookies', /cookies\[0\]\.path/],
    ['a cookie path with a semicolon', { cookies: [{ name: 'a', value: 'b', path: '/a;b' }] }, 'cookies', /cookies\[0\]\.path/],
    ['a same_site of another value', { cookies: [{ name: 'a', value: 'b', same_site: 'lax' }] }, 'cookies', /cookies\[0\]\.same_site must be one of Strict, Lax, None/],
    ['a cookie value with a semicolon', { cookies: [{ name: 'a', value: 'b;c' }] }, 'cookies', /cookies\[0\]\.value/],
    ['a cookie value with a control character', { cookies: [{ name: 'a', value: 'b\u0001c' }] }, 'cookies', /cookies\[0\]\.value/],
  ];
  for (const [what, body, field, message] of refusals) {
    it(`answers 400 naming ${field} for ${what}`, async () => {
      const res = await post(body);
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { error: string; message: string };
      expect(answer.error).toBe('Bad request');
      expect(answer.message).toContain(field);
      if (message) expect(answer.message).toMatch(message);
    });
  }

  it('captures with options and reports http_status, final_url and page_title; the admin API shows the options used', async () => {
    const res = await postJob({
      url: `${fixtures.url}/redirect?to=/opt/colors.html`,
      selector: '#green',
      scale: 2,
      wait_until: 'networkidle',
      dark_mode: true,
      hide_selectors: ['#red'],
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { job_id: string };
    const job = await waitForJob(server, key, created.job_id);
    expect(job).toMatchObject({ status: 'completed', http_status: 200, final_url: `${fixtures.url}/opt/colors.html`, page_title: 'Colours' });
    const image = Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer());
    const meta = await sharp(image).metadata();
    expect([meta.width, meta.height]).toEqual([600, 400]);
    const admin = await server.admin('GET', `/jobs/${created.job_id}`);
    expect(admin.body.options).toEqual({ selector: '#green', scale: 2, wait_until: 'networkidle', dark_mode: true, hide_selectors: ['#red'] });
  });

  it('takes wait_until settled with a settle_timeout, and shows both among the options used', async () => {
    const res = await postJob({ url: `${fixtures.url}/opt/colors.html`, wait_until: 'settled', settle_timeout: 2_000 });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { job_id: string };
    expect(await waitForJob(server, key, created.job_id)).toMatchObject({ status: 'completed', warnings: [] });
    const admin = await server.admin('GET', `/jobs/${created.job_id}`);
    expect(admin.body.options).toEqual({ wait_until: 'settled', settle_timeout: 2_000 });
  });

  it('fails a job with the reason a user can act on', async () => {
    await server.admin('PUT', '/settings', { capture_timeout_ms: 5_000 });
    const res = await post({ wait_for_selector: '#never' });
    const created = (await res.json()) as { job_id: string };
    const job = await waitForJob(server, key, created.job_id);
    await server.admin('PUT', '/settings', { capture_timeout_ms: 30_000 });
    expect(job).toMatchObject({ status: 'failed', error: 'Timed out waiting for selector #never' });
  });

  it('makes a PDF served as application/pdf', async () => {
    const created = (await (await post({ format: 'pdf' })).json()) as { job_id: string };
    const job = await waitForJob(server, key, created.job_id);
    expect(job.screenshot_url).toMatch(/\.pdf$/);
    const file = await fetch(job.screenshot_url);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await file.arrayBuffer()).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('says truncated: true for a WebP full page cut at 16383 image pixels, which the PNG of the same page is not', async () => {
    // 16384 CSS px: within the full-page cap, one pixel past libwebp's largest side.
    const page = { url: `${fixtures.url}/tall.html?h=16384`, full_page: true, width: 320 };
    const [webp, png] = await Promise.all(
      (['webp', 'png'] as const).map(async (format) => {
        const created = (await (await postJob({ ...page, format })).json()) as { job_id: string };
        const job = await waitForJob(server, key, created.job_id);
        const meta = await sharp(Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer())).metadata();
        return { status: job.status, truncated: job.truncated, format: meta.format, size: [meta.width, meta.height] };
      }),
    );
    expect(webp).toEqual({ status: 'completed', truncated: true, format: 'webp', size: [320, 16_383] });
    expect(png).toEqual({ status: 'completed', truncated: undefined, format: 'png', size: [320, 16_384] });
  });

  it('says truncated: true for a selector on a 33,000,000 px wide element on mobile and a WebP clip past 16383 pixels at scale 3', async () => {
    const jobs = [
      { url: `${fixtures.url}/opt/wide.html?h=1`, devices: ['mobile'], selector: '#wide' },
      { url: `${fixtures.url}/opt/wide.html?h=10`, clip: { x: 0, y: 0, width: 6000, height: 10 }, scale: 3, format: 'webp' },
    ];
    const results = await Promise.all(
      jobs.map(async (body) => {
        const created = (await (await postJob(body)).json()) as { job_id: string };
        const job = await waitForJob(server, key, created.job_id);
        if (job.status !== 'completed') return { status: job.status, error: job.error };
        const meta = await sharp(Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer()), { limitInputPixels: false }).metadata();
        return { status: job.status, truncated: job.truncated, format: meta.format, size: [meta.width, meta.height] };
      }),
    );
    expect(results).toEqual([
      { status: 'completed', truncated: true, format: 'png', size: [262_144, 3] },
      { status: 'completed', truncated: true, format: 'webp', size: [16_383, 30] },
    ]);
  });

  it('counts a delay and full pages in estimated_time_seconds', async () => {
    const plain = (await (await post({})).json()) as { estimated_time_seconds: number };
    const delayed = (await (await post({ delay: 9_000, full_page: true })).json()) as { estimated_time_seconds: number };
    expect(delayed.estimated_time_seconds).toBeGreaterThanOrEqual(plain.estimated_time_seconds + 9);
  });

  it('counts the full pages and delays of the jobs waiting ahead in estimated_time_seconds', async () => {
    // A server of its own, queue paused, so the means are the initial ones (3 s a viewport, 6 s a full page) and nothing runs.
    const fresh = await startTestServer({ browsers: 1 });
    try {
      fresh.srv.services.queue.pause();
      const { key: own } = await fresh.account();
      const estimate = async (body: object) =>
        ((await (await fresh.v1('POST', '/screenshot', own, { url: `${fixtures.url}/small.html`, ...body })).json()) as { estimated_time_seconds: number })
          .estimated_time_seconds;
      expect(await estimate({})).toBe(3);
      // Behind one viewport job: (3 s) / 2 slots + its own 3 s.
      expect(await estimate({})).toBe(5);
      for (let i = 0; i < 3; i++) await estimate({ full_page: true, delay: 5_000 });
      // Behind two viewports, three full pages and their 15 s of delays: (6 + 18 + 15) / 2 + 3.
      expect(await estimate({})).toBe(23);
    } finally {
      await fresh.close();
    }
  });
});

describe('the egress guard around scripts', () => {
  let canary: Canary; // 127.0.0.2: the test server allows 127.0.0.1 only

  beforeAll(async () => {
    canary = await startCanary('127.0.0.2');
  });
  afterAll(async () => {
    await canary?.close();
  });

  /**
   * Runs a job whose script fetches `target` twice, as a cross-origin (CORS) fetch and as a
   * no-cors one, and waits for both answers, whatever they are; returns the admin view of the job.
   */
  async function fetchingJob(target: string): Promise<{ status: string; blocked_requests: number }> {
    const fetches = [`${target}&mode=cors`, `${target}&mode=no-cors`].map(
      (url, i) => `fetch(${JSON.stringify(url)}${i ? ", { mode: 'no-cors' }" : ''}).then(() => 'answered', () => 'refused')`,
    );
    const scripts = `Promise.all([${fetches.join(', ')}])`;
    const created = (await (await post({ scripts })).json()) as { job_id: string };
    await waitForJob(server, key, created.job_id);
    return (await server.admin('GET', `/jobs/${created.job_id}`)).body;
  }

  it("lets a script's requests to an allowed address through", async () => {
    const path = `/small.html?from-script=${Date.now()}`;
    const job = await fetchingJob(`${fixtures.url}${path}`);
    expect(job).toMatchObject({ status: 'completed', blocked_requests: 0 });
    expect(fixtures.seen(path)).toHaveLength(2);
  });

  it("blocks a script's requests to a denied address, which never receives them, and counts each once in blocked_requests", async () => {
    const job = await fetchingJob(`${canary.origin}/from-script?run=${Date.now()}`);
    expect(job.status).toBe('completed');
    expect(job.blocked_requests).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(canary.hits()).toBe(0);
  });
});

describe('secrets given in headers, cookies and http_auth', () => {
  const SECRETS = ['hdr-s3cret-value', 'cookie-s3cret-value', 'pw-s3cret-value'];

  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('reach the page but never the job resource, the webhook, the admin API, the job store or the log', async () => {
    const res = await postJob({
      url: `${fixtures.url}/opt/echo.html`,
      headers: { 'X-Secret': SECRETS[0] },
      cookies: [{ name: 'sid', value: SECRETS[1] }],
      http_auth: { username: 'reader', password: SECRETS[2] },
      callback_url: `${receiver.url}/hook`,
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { job_id: string };
    // While the job waits, the secrets are sealed in its record.
    const job = await waitForJob(server, key, created.job_id);
    expect(job.status).toBe('completed');
    await receiver.waitFor(1, 20_000);
    const hook = receiver.received.find((r) => r.body.includes(created.job_id));
    expect(hook, 'the webhook of this job').toBeDefined();
    expect(JSON.parse(hook!.body)).toMatchObject({ type: 'screenshot.completed', data: { job_id: created.job_id, page_title: 'Echo' } });
    const deliveries = await server.admin('GET', `/webhooks?job_id=${created.job_id}`);
    const withSource = await (await server.v1('GET', `/screenshot/${created.job_id}?include_source=1`, key)).json();
    // The page saw them (its source echoes what the server received)...
    expect(withSource.page_source).toContain(SECRETS[0]);
    expect(withSource.page_source).toContain(SECRETS[1]);
    // ...nothing else shows them.
    const { page_source: _source, ...resource } = withSource;
    const admin = await server.admin('GET', `/jobs/${created.job_id}`);
    const list = await server.admin('GET', '/jobs?limit=50');
    expect(admin.body.options).toEqual({ header_names: ['X-Secret'], cookie_names: ['sid'], http_auth: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const jobsDb = fs.readFileSync(path.join(server.dataDir, 'jobs.db'), 'utf8');
    for (const [where, text] of [
      ['the job resource', JSON.stringify(resource)],
      ['the admin job', JSON.stringify(admin.body)],
      ['the admin job list', JSON.stringify(list.body)],
      ['the webhook', JSON.stringify(hook)],
      ['the admin webhook deliveries', JSON.stringify(deliveries.body)],
      ['jobs.db', jobsDb],
      ['the log', logged.join('')],
    ]) {
      for (const secret of SECRETS) expect(text.includes(secret), `${secret} in ${where}`).toBe(false);
    }
    // They waited apart from the job's record, and went when it ended.
    expect(jobsDb).not.toContain('sealed_secrets');
    expect(fs.readdirSync(path.join(server.dataDir, 'job-secrets'))).toEqual([]);
  });
});
