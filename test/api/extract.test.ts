// Outputs from the same render (`extract`) through the real API: Markdown, text, metadata and
// links of fixture pages modelled on documentation pages, the include_* parameters, and
// extraction that fails without failing the job. Real server, real Chromium, pages on loopback;
// every answer is checked against the served OpenAPI document.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ContractChecker, observe } from '../contract/openapi-checker.js';
import { corpusList, startCorpusServer } from '../helpers/corpus.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

const DOC_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Configuring the resolver</title></head><body>
<header><nav class="menu"><ul>
  <li><a href="/">Menuhome</a></li><li><a href="/download/">Menudownloads</a></li><li><a href="/support/">Menusupport</a></li>
  <li><a href="/news/">Menunews</a></li><li><a href="/about/">Menuabout</a></li>
</ul></nav></header>
<main><article>
<h1>Configuring the resolver</h1>
<p>The resolver reads its settings from a single file at start. This page explains every section of that file, with an example
you can copy, and the options that change how names are looked up. Read it once before you change anything on a running system.</p>
<h2>Installing the package</h2>
<p>Install the package with the system's package manager; it brings a default configuration that answers from the local cache
and forwards everything else to the servers named in the file. See <a href="/doc/packages.html">the packaging guide</a> for more.</p>
<pre><code class="language-sh">apt-get install resolver-tools
resolverctl status --verbose</code></pre>
<h2>Options</h2>
<p>Each option sits on its own line, a name and a value separated by white space. Unknown options are refused when the service starts,
and the line that holds them is logged so that you can correct it without guessing.</p>
<table><thead><tr><th>Option</th><th>Meaning</th></tr></thead>
<tbody><tr><td>nameserver</td><td>Address of a server to ask</td></tr><tr><td>timeout</td><td>Seconds before giving up</td></tr></tbody></table>
<h3>Examples</h3>
<p>A machine on a small network usually names one or two servers and a short timeout, which keeps lookups fast when a server is down.
<img src="/img/diagram.png" alt="Diagram of a lookup"></p>
</article></main>
<footer><p>Footer text of the site.</p></footer>
</body></html>`;

const META_PAGE = `<!doctype html><html lang="fr-CA"><head><meta charset="utf-8"><title>Release notes 2.0</title>
<meta name="description" content="What changed in release 2.0.">
<link rel="canonical" href="/releases/2.0">
<meta property="og:title" content="Release 2.0">
<meta property="og:type" content="article">
<meta property="og:url" content="/releases/2.0">
<meta property="og:image" content="/img/og.png">
<meta property="og:site_name" content="The Project">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:site" content="@project">
<meta name="twitter:title" content="Release 2.0 is out">
<link rel="icon" href="/favicon-32.png" sizes="32x32" type="image/png">
<link rel="apple-touch-icon" href="icons/touch.png" sizes="180x180">
<link rel="alternate" type="application/rss+xml" title="News feed" href="/feed.xml">
<link rel="alternate" type="application/atom+xml" title="Atom feed" href="https://feeds.example.test/atom">
<meta property="article:published_time" content="2026-01-02T03:04:05Z">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article","datePublished":"2025-12-31T00:00:00Z","dateModified":"2026-02-03T04:05:06Z"}</script>
</head><body><p>Release notes.</p></body></html>`;

const LINKS_PAGE = `<!doctype html><html><head><title>Links</title></head><body>
<a href="/a">First A</a> <a href="/a">Again A</a> <a href="b?x=1">Bee</a> <a href="http://other.test/c">  Cee
  text </a>
<a href="mailto:x@y.test">mail</a> <a href="javascript:void 0">js</a> <a href="/img"><img src="/i.png" alt="x"></a>
<a href="/labelled" aria-label="Labelled link"></a> <a href="#top">Top</a> <a href="#top">Top again</a>
</body></html>`;

// Overrides what Readability and the metadata reading call: extraction fails, the capture does not.
const HOSTILE_PAGE = `<!doctype html><html><head><title>Hostile</title></head><body><p>Some text.</p><a href="/x">x</a>
<script>
  Node.prototype.cloneNode = function () { throw new Error('no cloning here'); };
  Document.prototype.querySelectorAll = function () { throw new Error('no queries here'); };
</script></body></html>`;

const MANY_LINKS_PAGE = `<!doctype html><html><head><title>Many</title></head><body>${Array.from({ length: 5003 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join(' ')}</body></html>`;

// 5.5 MB of text in two-byte characters (é) in one article: more than the 5 MB kept of each output.
const LONG_PAGE = `<!doctype html><html><head><title>Long</title></head><body><article><h1>Long</h1>${Array.from({ length: 55 }, (_, i) => `<p>${i} ${'é'.repeat(50_000)}</p>`).join('')}</article></body></html>`;

const PAGES: Record<string, string> = {
  '/many.html': MANY_LINKS_PAGE,
  '/long.html': LONG_PAGE,
  '/doc/resolver.html': DOC_PAGE,
  '/meta.html': META_PAGE,
  '/links/index.html': LINKS_PAGE,
  '/hostile.html': HOSTILE_PAGE,
};

/** A 1×1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

let site: http.Server;
let siteUrl: string;
let server: TestServer;
let key: string;
let v1: ContractChecker;

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (pathname === '/img/diagram.png') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL);
      return;
    }
    const body = PAGES[pathname];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key } = await server.account());
  v1 = new ContractChecker(await (await fetch(`${server.url}/v1/openapi.json`)).json(), '/v1');
});

afterAll(async () => {
  await server?.close();
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
});

async function getV1(path: string): Promise<any> {
  const answer = await observe(server.url, 'GET', `/v1${path}`, { headers: { 'x-api-key': key } });
  expect(v1.check(answer)).toEqual([]);
  expect(answer.status).toBe(200);
  return answer.json;
}

/** Captures `body`, waits for the job to end, and returns its id. */
async function captured(body: Record<string, unknown>): Promise<string> {
  const res = await server.v1('POST', '/screenshot', key, body);
  expect(res.status).toBe(201);
  const { job_id: id } = (await res.json()) as { job_id: string };
  const ended = await waitForJob(server, key, id);
  expect(ended.status).toBe('completed');
  return id;
}

describe('extract through the API', () => {
  it('gives the Markdown and text of a documentation page: headings, a fenced code block, a pipe table, no navigation menu', async () => {
    const id = await captured({ url: `${siteUrl}/doc/resolver.html`, extract: ['markdown', 'text'] });
    const bare = await getV1(`/screenshot/${id}`);
    expect(bare).toMatchObject({ has_markdown: true, has_text: true, warnings: [] });
    expect(bare.markdown).toBeUndefined();
    expect(bare.text).toBeUndefined();

    const { markdown } = await getV1(`/screenshot/${id}?include_markdown=1`);
    expect(markdown.startsWith('# Configuring the resolver\n')).toBe(true);
    expect(markdown).toMatch(/^## Installing the package$/m);
    expect(markdown).toMatch(/^## Options$/m);
    expect(markdown).toMatch(/^### Examples$/m);
    expect(markdown).toMatch(/^```(sh)?\napt-get install resolver-tools\nresolverctl status --verbose\n```$/m);
    expect(markdown).toMatch(/^\| Option \| Meaning \|$/m);
    expect(markdown).toMatch(/^\| -+ \| -+ \|$/m);
    expect(markdown).toMatch(/^\| nameserver \| Address of a server to ask \|$/m);
    expect(markdown).toContain(`[the packaging guide](${siteUrl}/doc/packages.html)`);
    expect(markdown).toContain(`![Diagram of a lookup](${siteUrl}/img/diagram.png)`);
    expect(markdown).not.toMatch(/Menuhome|Menudownloads|Menusupport/);
    expect(markdown).not.toContain('Footer text');

    const { text } = await getV1(`/screenshot/${id}?include_text=true`);
    expect(text.startsWith('Configuring the resolver\n')).toBe(true);
    expect(text).toContain('Installing the package');
    expect(text).toContain('apt-get install resolver-tools');
    expect(text).not.toMatch(/Menuhome|[#|*`]/);
  });

  it('round-trips every metadata field of a page with Open Graph, Twitter, canonical, icons, feeds and a published time', async () => {
    const id = await captured({ url: `${siteUrl}/meta.html`, extract: ['metadata'] });
    const job = await getV1(`/screenshot/${id}`);
    expect(job.warnings).toEqual([]);
    expect(job.has_markdown).toBe(false);
    expect(job.metadata).toEqual({
      title: 'Release notes 2.0',
      description: 'What changed in release 2.0.',
      language: 'fr-CA',
      canonical_url: `${siteUrl}/releases/2.0`,
      open_graph: { title: 'Release 2.0', type: 'article', url: `${siteUrl}/releases/2.0`, image: `${siteUrl}/img/og.png`, site_name: 'The Project' },
      twitter: { card: 'summary_large_image', site: '@project', title: 'Release 2.0 is out' },
      favicon: `${siteUrl}/favicon-32.png`,
      icons: [
        { url: `${siteUrl}/favicon-32.png`, rel: 'icon', sizes: '32x32', type: 'image/png' },
        { url: `${siteUrl}/icons/touch.png`, rel: 'apple-touch-icon', sizes: '180x180', type: '' },
      ],
      feeds: [
        { url: `${siteUrl}/feed.xml`, title: 'News feed', type: 'application/rss+xml' },
        { url: 'https://feeds.example.test/atom', title: 'Atom feed', type: 'application/atom+xml' },
      ],
      // The meta tag wins over JSON-LD; JSON-LD fills what the tags do not say.
      published_time: '2026-01-02T03:04:05Z',
      modified_time: '2026-02-03T04:05:06Z',
    });
  });

  it('lists the links of the page absolute, de-duplicated, with their text, through include_links', async () => {
    const id = await captured({ url: `${siteUrl}/links/index.html`, extract: ['links'] });
    const job = await getV1(`/screenshot/${id}?include_links=1`);
    expect(job.has_links).toBe(true);
    expect(job.links_truncated).toBeUndefined();
    expect(job.links).toEqual([
      { url: `${siteUrl}/a`, text: 'First A' },
      { url: `${siteUrl}/links/b?x=1`, text: 'Bee' },
      { url: 'http://other.test/c', text: 'Cee text' },
      { url: `${siteUrl}/img`, text: '' },
      { url: `${siteUrl}/labelled`, text: 'Labelled link' },
      { url: `${siteUrl}/links/index.html#top`, text: 'Top' },
    ]);
  });

  it('keeps at most 5000 links and says links_truncated', async () => {
    const id = await captured({ url: `${siteUrl}/many.html`, extract: ['links'] });
    const job = await getV1(`/screenshot/${id}?include_links=1`);
    expect(job.links_truncated).toBe(true);
    expect(job.links).toHaveLength(5000);
    expect(job.links[4999]).toEqual({ url: `${siteUrl}/p/4999`, text: '4999' });
  });

  it('keeps at most 5 MB of Markdown and of text, cut between characters', async () => {
    const id = await captured({ url: `${siteUrl}/long.html`, extract: ['markdown', 'text'] });
    const job = await getV1(`/screenshot/${id}?include_markdown=1&include_text=1`);
    for (const kind of ['markdown', 'text'] as const) {
      const bytes = Buffer.byteLength(job[kind]);
      expect(bytes, kind).toBeLessThanOrEqual(5 * 1024 * 1024);
      expect(bytes, kind).toBeGreaterThan(5 * 1024 * 1024 - 4);
      // Whole characters only: no replacement character where a two-byte one was cut.
      expect(job[kind].endsWith('é'), kind).toBe(true);
      expect(job[kind], kind).not.toContain('\uFFFD');
    }
    expect(job.markdown).toMatch(/^# Long/);
  }, 120_000);

  it('clears has_markdown, has_text and has_links and removes their files when the retention period passes', async () => {
    const id = await captured({ url: `${siteUrl}/doc/resolver.html`, extract: ['markdown', 'text', 'links', 'metadata'] });
    const files = server.srv.services.files;
    const outputs = ['markdown', 'text', 'links'] as const;
    for (const output of outputs) expect(await files.readOutput(id, output)).not.toBeNull();
    // The job ended eight days ago: past the default retention of seven.
    await server.srv.services.stores.jobs.update(id, { completed_at: Date.now() - 8 * 86_400_000 });
    expect(await server.srv.services.retention.sweep()).toBeGreaterThan(0);
    const job = await getV1(`/screenshot/${id}?include_markdown=1&include_text=1&include_links=1`);
    expect(job).toMatchObject({ expired: true, has_markdown: false, has_text: false, has_links: false });
    for (const output of ['markdown', 'text', 'links']) expect(job).not.toHaveProperty(output);
    for (const output of outputs) expect(await files.readOutput(id, output)).toBeNull();
  });

  it.each([
    ['git-tutorial', 'This tutorial explains how to import a new project into Git', '$ git init'],
    ['rust-book-ownership', 'Ownership', 'let s = String::from("hello");'],
    // Each command is written as a prompt in one <code>, then the command in another.
    ['handbook-ja', 'apt-get', '$ aptitude why python3-debian\ni   aptitude         Suggests apt-xapian-index'],
  ])('reads a real documentation page (%s): its title first, its code in fenced blocks, its links absolute', async (id, text, code) => {
    const page = corpusList().pages.find((p) => p.id === id)!;
    const corpus = await startCorpusServer();
    try {
      const jobId = await captured({ url: corpus.url + page.path, extract: ['markdown', 'metadata', 'links'] });
      const job = await getV1(`/screenshot/${jobId}?include_markdown=1&include_links=1`);
      expect(job.warnings.filter((w: { code: string }) => w.code === 'extract_failed')).toEqual([]);
      expect(job.markdown.split('\n')[0]).toBe(`# ${job.metadata.title}`);
      expect(job.markdown).toContain(text);
      const blocks = [...job.markdown.matchAll(/^```[a-z]*\n([\s\S]*?)\n```$/gm)].map((m) => m[1]);
      expect(blocks.some((block) => block.includes(code)), `a fenced block holding ${code}`).toBe(true);
      expect(job.links.length).toBeGreaterThan(0);
      for (const link of job.links) expect(link.url).toMatch(/^https?:\/\//);
      // Links in the Markdown are absolute, or point within the page.
      for (const [, href] of job.markdown.matchAll(/\]\(([^)\s]+)/g)) expect(href).toMatch(/^(https?:|mailto:|#)/);
    } finally {
      await corpus.close();
    }
  }, 120_000);

  it('completes a job whose page breaks extraction, with an extract_failed warning naming each output', async () => {
    const id = await captured({ url: `${siteUrl}/hostile.html`, extract: ['markdown', 'text', 'metadata', 'links'] });
    const job = await getV1(`/screenshot/${id}?include_markdown=1&include_text=1&include_links=1`);
    expect(job.screenshot_url).toBeTruthy();
    expect(job).toMatchObject({ has_markdown: false, has_text: false, has_links: false });
    expect(job.metadata).toBeUndefined();
    expect(job.markdown).toBeUndefined();
    expect(job.links).toBeUndefined();
    const warnings = job.warnings.filter((w: { code: string }) => w.code === 'extract_failed');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toMatch(/^Could not extract markdown: .*no cloning here.*; text: .*; metadata: .*no queries here.*; links: .*no queries here/);
  });

  it('refuses an unknown or repeated extract value with 400 naming the field, and a bad include_markdown', async () => {
    for (const extract of [['pdf'], ['markdown', 'markdown'], [], 'markdown']) {
      const res = await server.v1('POST', '/screenshot', key, { url: `${siteUrl}/meta.html`, extract });
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain('extract');
    }
    const id = await captured({ url: `${siteUrl}/meta.html` });
    const res = await server.v1('GET', `/screenshot/${id}?include_markdown=yes`, key);
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('include_markdown');
    // A job that asked for no extraction says nothing of it.
    const job = await getV1(`/screenshot/${id}?include_markdown=1`);
    expect(job.has_markdown).toBeUndefined();
    expect(job.metadata).toBeUndefined();
  });

  it('counts extract in the result cache key', async () => {
    const url = `${siteUrl}/meta.html`;
    const post = async (body: Record<string, unknown>) => (await (await server.v1('POST', '/screenshot', key, { url, cache_ttl: 3600, ...body })).json()) as any;
    const plain = await post({});
    await waitForJob(server, key, plain.job_id);
    const withMeta = await post({ extract: ['metadata', 'links'] });
    expect(withMeta.cached).toBe(false);
    await waitForJob(server, key, withMeta.job_id);
    const again = await post({ extract: ['links', 'metadata'] });
    expect(again.cached).toBe(true);
    expect(again.job_id).toBe(withMeta.job_id);
  });
});
