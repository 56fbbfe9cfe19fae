import http from 'node:http';
import type { AddressInfo } from 'node:net';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { renderRequestBody } from '../../server/api/render-link.js';
import { type Canary, startCanary } from '../egress/canary.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// `html` instead of `url`: the document is rendered as the page at `base_url`, its relative
// addresses resolving there, and everything it loads goes through the egress guard like a page's.
// A real server, real Chromium, a fixture server on 127.0.0.1 and a canary on 127.0.0.2 (a
// loopback address the test server's egress guard does not allow: it allows 127.0.0.1/32).

let server: TestServer;
let key: string;
let keyId: string;
let assets: http.Server;
let assetsOrigin: string;
const assetPaths: string[] = [];
/** The X-Test header each request to the fixture server carried. */
const assetHeaders: Array<string | undefined> = [];
let canary: Canary;

beforeAll(async () => {
  const green = await sharp({ create: { width: 200, height: 200, channels: 3, background: { r: 0, g: 255, b: 0 } } }).png().toBuffer();
  assets = http.createServer((req, res) => {
    assetPaths.push(req.url ?? '');
    assetHeaders.push(req.headers['x-test'] as string | undefined);
    if (req.url === '/site/img/green.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(green);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not here');
    }
  });
  await new Promise<void>((resolve) => assets.listen(0, '127.0.0.1', resolve));
  assetsOrigin = `http://127.0.0.1:${(assets.address() as AddressInfo).port}`;
  canary = await startCanary('127.0.0.2');
  server = await startTestServer();
  ({ key, keyId } = await server.account());
}, 60_000);

afterAll(async () => {
  await server?.close();
  await canary?.close();
  await new Promise((resolve) => assets?.close(resolve));
});

async function post(body: Record<string, unknown>): Promise<Response> {
  for (;;) {
    const res = await server.v1('POST', '/screenshot', key, body);
    if (res.status !== 429) return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

async function completed(body: Record<string, unknown>) {
  const res = await post(body);
  expect(res.status).toBe(201);
  const created = (await res.json()) as { job_id: string; cached?: boolean };
  const job = await waitForJob(server, key, created.job_id);
  expect(job).toMatchObject({ status: 'completed' });
  return { job, cached: created.cached };
}

/** The colour (RGB) at (x, y) of a job's image. */
async function pixelOf(job: { screenshot_url: string }, x: number, y: number): Promise<number[]> {
  const image = Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer());
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}

const PAGE = '<!doctype html><title>Given</title><body style="margin:0;background:#00f"><img src="img/green.png" style="display:block;width:200px;height:200px"></body>';

describe('POST /v1/screenshot with html', () => {
  it('renders the document at base_url, its relative images loaded from there; the job says about:html', async () => {
    assetPaths.length = 0;
    const base = `${assetsOrigin}/site/page.html`;
    const { job } = await completed({ html: PAGE, base_url: `${base}#top` });
    expect(job).toMatchObject({ url: 'about:html', final_url: base, page_title: 'Given' });
    expect((await server.admin('GET', `/jobs/${job.job_id}`)).body.blocked_requests).toBe(0);
    expect(await pixelOf(job, 100, 100)).toEqual([0, 255, 0]);
    expect(await pixelOf(job, 1000, 500)).toEqual([0, 0, 255]);
    // The image came from base_url's directory; the document itself was never fetched.
    expect(assetPaths).toContain('/site/img/green.png');
    expect(assetPaths).not.toContain('/site/page.html');
  }, 60_000);

  it('works with the options that pause requests too: headers reach base_url\'s origin, blocking lets the document through', async () => {
    assetPaths.length = 0;
    assetHeaders.length = 0;
    const base = `${assetsOrigin}/site/page.html`;
    const withHeaders = await completed({ html: PAGE, base_url: base, headers: { 'X-Test': 'given' } });
    expect(await pixelOf(withHeaders.job, 100, 100)).toEqual([0, 255, 0]);
    expect(assetHeaders[assetPaths.indexOf('/site/img/green.png')]).toBe('given');
    const blocking = await completed({ html: PAGE, base_url: base, block_ads: true, block_trackers: true });
    expect(blocking.job).toMatchObject({ final_url: base, page_title: 'Given' });
    expect(await pixelOf(blocking.job, 100, 100)).toEqual([0, 255, 0]);
    expect(assetPaths).not.toContain('/site/page.html');
  }, 60_000);

  it('renders a document without base_url, on every device and format, sized', async () => {
    const res = await post({ html: '<body style="margin:0;background:#f00">', devices: ['desktop', 'mobile'], format: 'webp', image_width: 100 });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { jobs: Array<{ job_id: string }> };
    for (const { job_id: id } of created.jobs) {
      const job = await waitForJob(server, key, id);
      expect(job).toMatchObject({ status: 'completed', url: 'about:html', final_url: 'http://html.invalid/' });
      const near = (await pixelOf(job, 50, 50)).every((c, i) => Math.abs(c - [255, 0, 0][i]!) <= 8);
      expect(near).toBe(true);
    }
  }, 60_000);

  it('counts the document in the result cache key', async () => {
    const first = await completed({ html: '<p>one</p>', cache_ttl: 600 });
    expect(first.cached).toBe(false);
    const same = await completed({ html: '<p>one</p>', cache_ttl: 600 });
    expect(same.cached).toBe(true);
    const other = await completed({ html: '<p>two</p>', cache_ttl: 600 });
    expect(other.cached).toBe(false);
  }, 60_000);

  it('cannot reach a loopback address the guard denies, nor the service itself, by img, iframe or fetch', async () => {
    const denied = canary.origin;
    const service = server.url;
    const html = `<!doctype html><title>waiting</title>
      <img src="${denied}/img.png"><iframe src="${denied}/frame"></iframe>
      <img src="${service}/healthz"><iframe src="${service}/admin/"></iframe>
      <script>
        const read = (u) => fetch(u).then((r) => (r.ok ? 'read' : 'refused'), () => 'refused');
        Promise.all([read('${denied}/fetch'), read('${service}/healthz')]).then((r) => {
          document.title = r.join(',');
          document.body.insertAdjacentHTML('beforeend', '<p id="done">done</p>');
        });
      </script>`;
    const { job } = await completed({ html, base_url: `${assetsOrigin}/site/`, wait_for_selector: '#done' });
    expect(job.page_title).toBe('refused,refused');
    expect(canary.hits()).toBe(0);
    // Each img, iframe and fetch refused by the proxy is counted.
    expect((await server.admin('GET', `/jobs/${job.job_id}`)).body.blocked_requests).toBe(6);
  }, 60_000);

  it('reads an address the guard allows, by the same probe (the refusals above are the guard\'s)', async () => {
    const html = `<!doctype html><title>waiting</title><script>
      fetch('${assetsOrigin}/site/img/green.png').then((r) => (r.ok ? 'read' : 'refused'), () => 'refused').then((r) => {
        document.title = r;
        document.body.insertAdjacentHTML('beforeend', '<p id="done">done</p>');
      });
    </script>`;
    const { job } = await completed({ html, base_url: `${assetsOrigin}/site/`, wait_for_selector: '#done' });
    expect(job.page_title).toBe('read');
  }, 60_000);

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ['both url and html', { url: 'http://127.0.0.1/', html: '<p>x</p>' }, 'url'],
    ['neither url nor html', { devices: ['desktop'] }, 'url'],
    ['base_url without html', { url: 'http://127.0.0.1/', base_url: 'http://127.0.0.1/' }, 'base_url'],
    ['an empty html', { html: '' }, 'html'],
    ['html that is no string', { html: ['<p>'] }, 'html'],
    ['html over 5 MB of UTF-8', { html: 'é'.repeat(2_700_000) }, 'html'],
    ['a base_url of another scheme', { html: '<p>x</p>', base_url: 'file:///etc/' }, 'base_url'],
    ['a base_url with a password', { html: '<p>x</p>', base_url: 'http://u:p@127.0.0.1/' }, 'base_url'],
  ];
  for (const [what, body, field] of refusals) {
    it(`answers 400 naming ${field} for ${what}`, async () => {
      const res = await post(body);
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { error: string; message: string };
      expect(answer.error).toBe('Bad request');
      expect(answer.message).toContain(field);
    });
  }

  it('takes a 5 MB document and answers 413 for a body over the limit', async () => {
    const big = `<p>${'a'.repeat(5 * 1024 * 1024 - 20)}</p>`;
    const ok = await post({ html: big });
    expect(ok.status).toBe(201);
    const res = await post({ html: `<p>${'a'.repeat(12 * 1024 * 1024)}</p>` });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe('Payload too large');
  }, 60_000);

  it('is refused in a render link, naming html (a document does not fit in a link)', () => {
    expect(() => renderRequestBody([['html', '<p>x</p>']])).toThrow(/html cannot be given in a render link/);
  });

  it('is refused when the control panel signs a render link, naming html', async () => {
    const res = await server.admin('POST', `/keys/${keyId}/render-link`, { html: '<p>x</p>' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^html cannot be given in a render link/);
  });
});
