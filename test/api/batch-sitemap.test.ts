import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// POST /v1/batches with a sitemap, read from a local site through the egress guard, on a real
// server and store with a scripted engine (the pages are not what is tested).

let server: TestServer;
let site: http.Server;
let siteUrl: string;

const urlset = (paths: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
  paths.map((p) => `<url><loc>\n  ${siteUrl}${p}\n</loc><lastmod>2026-11-01</lastmod></url>`).join('') +
  '</urlset>';

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const files: Record<string, () => Buffer | string> = {
      '/sitemap_index.xml': () =>
        `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
        `<sitemap><loc>${siteUrl}/sitemap-pages.xml</loc></sitemap><sitemap><loc>${siteUrl}/sitemap-blog.xml.gz</loc></sitemap></sitemapindex>`,
      '/sitemap-pages.xml': () => urlset(['/', '/about?lang=en&amp;v=2', '/private/a']),
      '/sitemap-blog.xml.gz': () => zlib.gzipSync(urlset(['/blog/1', '/blog/2', '/private/b'])),
      // 64 MiB of XML once unzipped, past the protocol's 50 MB.
      '/bomb.xml.gz': () => zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, ' ')),
    };
    const file = files[req.url ?? ''];
    if (!file) return res.writeHead(404).end();
    res.end(file());
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  server = await startTestServer({ ratePerSecond: 1000 }, { engine: new FakeCaptureEngine() });
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => site?.close(resolve));
});

const post = (key: string, body: unknown) => server.v1('POST', '/batches', key, body);

describe('POST /v1/batches with a sitemap', () => {
  it('reads a sitemap index with a plain and a gzip part, leaving out what exclude matches', async () => {
    const { key } = await server.account();
    const res = await post(key, { sitemap: `${siteUrl}/sitemap_index.xml`, exclude: '/private/', width: 320, height: 240 });
    expect(res.status).toBe(201);
    const created = await res.json();
    expect(created.total).toBe(4);
    await expect.poll(async () => (await (await server.v1('GET', `/batches/${created.batch_id}`, key)).json()).status).toBe('completed');
    const batch = await (await server.v1('GET', `/batches/${created.batch_id}`, key)).json();
    expect(batch.jobs.map((j: { url: string }) => j.url)).toEqual(['/', '/about?lang=en&v=2', '/blog/1', '/blog/2'].map((p) => `${siteUrl}${p}`));
  });

  it('keeps only what include matches', async () => {
    const { key } = await server.account();
    const created = await (await post(key, { sitemap: `${siteUrl}/sitemap_index.xml`, include: '/blog/\\d+$' })).json();
    expect(created.total).toBe(2);
  });

  it('answers 400 naming the pattern for one that could backtrack without end, or does not parse, counting nothing', async () => {
    const { key } = await server.account();
    for (const [field, source] of [['exclude', '(a+)+$'], ['include', '(x|xx)*y'], ['exclude', '(']]) {
      const res = await post(key, { sitemap: `${siteUrl}/sitemap_index.xml`, [field]: source });
      expect(res.status).toBe(400);
      expect((await res.json()).message).toMatch(new RegExp(`^${field} `));
    }
    const long = await post(key, { sitemap: `${siteUrl}/sitemap_index.xml`, include: 'a'.repeat(257) });
    expect(long.status).toBe(400);
    expect((await (await server.v1('GET', '/usage', key)).json()).calls_today).toBe(0);
  });

  it('answers 400 for a sitemap it cannot read: missing, past its bound unzipped, or at an address the egress guard denies', async () => {
    const { key } = await server.account();
    const cases: Array<[string, RegExp]> = [
      [`${siteUrl}/gone.xml`, /could not be read: it answered 404$/],
      [`${siteUrl}/bomb.xml.gz`, /could not be read: it is larger than 52428800 bytes unzipped$/],
      ['http://127.0.0.2:1/sitemap.xml', /could not be read: blocked by egress policy/],
    ];
    for (const [sitemap, message] of cases) {
      const res = await post(key, { sitemap });
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error).toBe('Bad request');
      expect(body.message).toMatch(message);
    }
  });

  it('answers 400 for items and a sitemap together, or include without a sitemap', async () => {
    const { key } = await server.account();
    expect((await post(key, { sitemap: `${siteUrl}/sitemap_index.xml`, items: [{ url: siteUrl }] })).status).toBe(400);
    const res = await post(key, { items: [{ url: siteUrl }], include: 'x' });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toBe('include applies only with sitemap');
  });
});
