import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// The MCP endpoint through the SDK's own client, against a real server and real Chromium.

let fixtures: FixtureServer;
let server: TestServer;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ ratePerSecond: 100 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

/** A client connected to /v1/mcp with the key; closed by the caller. */
async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/v1/mcp`), { requestInit: { headers: { 'X-API-Key': key } } }));
  return client;
}

async function call(key: string, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const client = await connect(key);
  try {
    return (await client.callTool({ name, arguments: args }, undefined, { timeout: 150_000 })) as CallToolResult;
  } finally {
    await client.close();
  }
}

const textOf = (result: CallToolResult) =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => (c as { text: string }).text)
    .join('\n');

/** A bare JSON-RPC initialize, as a client that sends no key or comes from elsewhere would. */
function rawInitialize(headers: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/v1/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

describe('the MCP endpoint', () => {
  it('lists its tools to the SDK client', async () => {
    const { key } = await server.account();
    const client = await connect(key);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['read_batch', 'read_page', 'start_batch', 'take_screenshot']);
      const shot = tools.find((t) => t.name === 'take_screenshot')!;
      expect(Object.keys(shot.inputSchema.properties ?? {}).sort()).toEqual(['base_url', 'device', 'evidence', 'format', 'full_page', 'html', 'login', 'url']);
      // url or html: exactly one, which the job's schema checks (a tool error naming them).
      expect(shot.inputSchema.required ?? []).toEqual([]);
      const read = tools.find((t) => t.name === 'read_page')!;
      expect(Object.keys(read.inputSchema.properties ?? {}).sort()).toEqual(['base_url', 'html', 'login', 'url']);
    } finally {
      await client.close();
    }
  });

  it('take_screenshot returns the picture at the preset size, and the job is an ordinary, counted one', async () => {
    const { key } = await server.account();
    const progress: number[] = [];
    const client = await connect(key);
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name: 'take_screenshot', arguments: { url: `${fixtures.url}/small.html`, device: 'mobile' } }, undefined, {
        timeout: 150_000,
        onprogress: (p) => progress.push(p.progress),
      })) as CallToolResult;
    } finally {
      await client.close();
    }
    expect(result.isError).toBeFalsy();
    const image = result.content.find((c) => c.type === 'image') as { data: string; mimeType: string };
    expect(image.mimeType).toBe('image/png');
    const meta = await sharp(Buffer.from(image.data, 'base64')).metadata();
    // The mobile preset: 390x844 CSS px at scale 3.
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1170, 2532]);
    expect(progress.at(-1)).toBe(100);

    const text = textOf(result);
    const jobId = /job_id: (\S+)/.exec(text)![1];
    expect(text).toContain(`status_url: ${server.url}/v1/screenshot/${jobId}`);
    const screenshotUrl = /screenshot_url: (\S+)/.exec(text)![1];
    const file = await fetch(screenshotUrl);
    expect(Buffer.from(await file.arrayBuffer()).toString('base64')).toBe(image.data);

    const status = await (await server.v1('GET', `/screenshot/${jobId}`, key)).json();
    expect([status.status, status.preset, status.url]).toEqual(['completed', 'mobile', `${fixtures.url}/small.html`]);
    const history = await server.admin('GET', `/jobs?limit=200`);
    const jobs = (history.body.jobs ?? history.body) as Array<{ id?: string; _id?: string; job_id?: string }>;
    expect(jobs.some((j) => (j.job_id ?? j.id ?? j._id) === jobId)).toBe(true);
    const usage = await (await server.v1('GET', '/usage', key)).json();
    expect(usage.calls_today).toBe(1);
  }, 180_000);

  it('take_screenshot with evidence gives the evidence_url of a signed bundle of the page', async () => {
    const { key } = await server.account();
    const result = await call(key, 'take_screenshot', { url: `${fixtures.url}/small.html`, evidence: true });
    expect(result.isError).toBeFalsy();
    const evidenceUrl = /evidence_url: (\S+)/.exec(textOf(result))?.[1];
    expect(evidenceUrl).toMatch(/\/evidence\.wacz$/);
    const bundle = Buffer.from(await (await fetch(evidenceUrl!)).arrayBuffer());
    const checked = await fetch(`${server.url}/v1/evidence/verify`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/wacz' }, body: bundle });
    expect(await checked.json()).toMatchObject({ valid: true, signed_by_this_appliance: true, url: `${fixtures.url}/small.html` });
  }, 180_000);

  it('read_page returns the Markdown of the main content and the metadata of a documentation page', async () => {
    const { key } = await server.account();
    const result = await call(key, 'read_page', { url: `${fixtures.url}/doc.html` });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    // Title first (the page's declared title), then the article's own headings.
    expect(text).toMatch(/^# Widget install guide\n/);
    expect(text).toMatch(/^#+ Installing the widget$/m);
    expect(text).toMatch(/^#+ Download$/m);
    expect(text).toMatch(/```[a-z]*\ntar xzf widget\.tar\.gz\ncd widget && \.\/install\n```/);
    expect(text).not.toContain('Menu item one');
    const metadata = JSON.parse(/^metadata: (.*)$/m.exec(text)?.[1] ?? 'null');
    expect(metadata).toMatchObject({ title: 'Installing the widget', description: 'How to install the widget.', language: 'en' });
    expect(metadata.open_graph).toMatchObject({ title: 'Widget install guide' });
    expect(text).not.toMatch(/<h1|<p>/);
  }, 180_000);

  it('read_page and take_screenshot take an HTML document instead of a url, with base_url for its relative links', async () => {
    const { key } = await server.account();
    const html =
      '<!doctype html><html lang="en"><head><title>Given document</title></head><body style="margin:0;background:#0c0">' +
      '<article><h1>Release notes</h1><p>The widget now installs itself in one step, with no questions asked of the operator.</p>' +
      '<p>See <a href="notes/2.html">the previous notes</a> for what changed before this release of the widget.</p></article></body></html>';
    const read = await call(key, 'read_page', { html, base_url: `${fixtures.url}/docs/` });
    expect(read.isError).toBeFalsy();
    const text = textOf(read);
    expect(text).toMatch(/^#+ Release notes$/m);
    expect(text).toContain(`(${fixtures.url}/docs/notes/2.html)`);
    expect(text).toMatch(/^final_url: /m);

    const shot = await call(key, 'take_screenshot', { html, device: 'mobile' });
    expect(shot.isError).toBeFalsy();
    const image = shot.content.find((c) => c.type === 'image') as { data: string };
    const { data, info } = await sharp(Buffer.from(image.data, 'base64')).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([1170, 2532]);
    expect([data[0], data[1], data[2]]).toEqual([0, 204, 0]);

    const both = await call(key, 'take_screenshot', { html, url: `${fixtures.url}/small.html` });
    expect(both.isError).toBe(true);
    expect(textOf(both)).toMatch(/^Bad request: .*(url|html)/);
    const neither = await call(key, 'read_page', {});
    expect(neither.isError).toBe(true);
    expect(textOf(neither)).toMatch(/^Bad request: /);
  }, 180_000);

  it('read_page answers from the page source when extraction fails, and /healthz stays prompt while it reads 800 KB of adversarial markup', async () => {
    const { key } = await server.account();
    // 200 000 unclosed "<svg" in a comment, on a page that breaks the Markdown extraction, so
    // read_page falls back to the text of the stored source: a backtracking expression held the
    // event loop ~25-45 s over it.
    const html =
      '<!doctype html><html><head><title>Fallback</title></head><body><h1>Before the comment</h1>' +
      `<!--${'<svg'.repeat(200_000)}--><p>After the comment &amp; more.</p>` +
      "<script>Node.prototype.cloneNode = function () { throw new Error('no cloning here'); };</script></body></html>";
    // The test runs in the server's process: a held event loop holds this loop too, so what is
    // measured is the longest wait between two answers, the hold included wherever it falls.
    const answered: number[] = [performance.now()];
    let reading = true;
    const polling = (async () => {
      while (reading) {
        // An answer that never came (a connection dropped meanwhile) counts when it failed.
        await fetch(`${server.url}/healthz`)
          .then((res) => res.arrayBuffer())
          .catch(() => undefined);
        answered.push(performance.now());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    let result: CallToolResult;
    try {
      result = await call(key, 'read_page', { html });
    } finally {
      reading = false;
      await polling;
      answered.push(performance.now());
    }
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^# Fallback\n\nBefore the comment\nAfter the comment & more\.\n/);
    expect(textOf(result)).toMatch(/^warning extract_failed: .*no cloning here/m);
    const longestWait = Math.max(...answered.slice(1).map((at, i) => at - answered[i]));
    // /healthz does no work of its own and is asked every 20 ms; 2 s is far above what a loaded
    // machine adds to that, and far below the seconds the held event loop made it wait.
    expect(longestWait).toBeLessThan(2_000);
  }, 180_000);

  it("takes a document as large as POST /v1/screenshot does (past the SDK's 4 MB default)", async () => {
    const { key } = await server.account();
    const html = `<!doctype html><body style="margin:0;background:#00c"><!-- ${'x'.repeat(4.5 * 1024 * 1024)} --></body>`;
    const shot = await call(key, 'take_screenshot', { html });
    expect(textOf(shot)).toMatch(/^status: completed$/m);
    const image = shot.content.find((c) => c.type === 'image') as { data: string };
    const { data } = await sharp(Buffer.from(image.data, 'base64')).raw().toBuffer({ resolveWithObject: true });
    expect([data[0], data[1], data[2]]).toEqual([0, 0, 204]);
  }, 180_000);

  it('answers with the X-RateLimit-* headers of the key, as every v1 route does', async () => {
    const { key } = await server.account({ daily_limit: 7 });
    const res = await rawInitialize({ 'x-api-key': key });
    expect(res.status).toBe(200);
    expect([res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining')]).toEqual(['7', '7']);
    expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    await res.body?.cancel();
  });

  it('a request without a key is 401 Unauthorized, as on every v1 route', async () => {
    const res = await rawInitialize({});
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe('Unauthorized');
    await expect(connect('')).rejects.toMatchObject({ code: 401, message: expect.stringContaining('Unauthorized') });
  });

  it('a key whose whitelist does not hold the client address is 403 IP not allowed', async () => {
    const { key } = await server.account({}, { ip_whitelist: ['10.1.2.3'] });
    const res = await rawInitialize({ 'x-api-key': key });
    expect(res.status).toBe(403);
    expect((await res.json()).error).toBe('IP not allowed');
    await expect(connect(key)).rejects.toMatchObject({ code: 403, message: expect.stringContaining('IP not allowed') });
  });

  it('GET and DELETE are 405 with the allowed method named', async () => {
    const { key } = await server.account();
    for (const method of ['GET', 'DELETE']) {
      const res = await server.v1(method, '/mcp', key);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toEqual({ error: 'Method not allowed', message: 'This method is not allowed on this address; allowed: POST' });
    }
  });

  it('a page the egress policy denies is a tool error naming the policy', async () => {
    const { key } = await server.account();
    // Only 127.0.0.1/32 is allowed to the test server; the rest of loopback is denied.
    const result = await call(key, 'take_screenshot', { url: `http://127.0.0.2:${new URL(fixtures.url).port}/small.html` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^The capture failed: .*blocked by egress policy: /);
    expect(textOf(result)).toMatch(/job_id: /);
  }, 180_000);

  it('a call past the daily limit is a tool error saying so', async () => {
    const { key } = await server.account({ daily_limit: 1 });
    const first = await call(key, 'take_screenshot', { url: `${fixtures.url}/small.html` });
    expect(first.isError).toBeFalsy();
    const second = await call(key, 'take_screenshot', { url: `${fixtures.url}/small.html` });
    expect(second.isError).toBe(true);
    expect(textOf(second)).toMatch(/^Rate limit exceeded: .*daily limit/i);
    expect((await (await server.v1('GET', '/usage', key)).json()).calls_today).toBe(1);
  }, 180_000);

  it('a field the job schema refuses is a tool error naming it', async () => {
    const { key } = await server.account();
    const result = await call(key, 'take_screenshot', { url: 'ftp://example.test/' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Bad request: url /);
  });
});
