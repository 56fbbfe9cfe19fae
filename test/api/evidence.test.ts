// Evidence bundles through the real API: a capture with `evidence: true` of a loopback page with
// an image, a stylesheet and a script, whose WACZ follows the 1.1.1 layout, is signed by the
// appliance's key, and holds none of the request's secrets; POST /v1/evidence/verify on it, on
// a copy with one byte changed, and on one signed by another key. Real server, real Chromium.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';

import pixelmatch from 'pixelmatch';
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import yazl from 'yazl';

import { VERIFY_MAX_BYTES } from '../../server/api/evidence-routes.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { EVIDENCE_KEY_FILE } from '../../server/crypto/evidence-key.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

/** A 1×1 red PNG. */
const PIXEL_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const PIXEL = Buffer.from(PIXEL_BASE64, 'base64');

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Supplier terms</title>
<link rel="stylesheet" href="/style.css"></head>
<body><h1>Terms of sale</h1><img src="/pic.png" width="40" height="40" alt="logo"><img src="/moved.png" width="20" height="20" alt="moved">
<img src="data:image/png;base64,${PIXEL_BASE64}" width="20" height="20" alt="inline"><p id="by-script">not yet</p>
<script src="/app.js"></script></body></html>`;
const STYLE = 'body { background: rgb(250, 240, 200); font: 16px sans-serif } h1 { color: rgb(20, 60, 140) }';
const SCRIPT = "document.getElementById('by-script').textContent = 'Written by the script';";

const SECRETS = { header: 'hdr-secret-value-4711', cookie: 'cookie-secret-value-4712', password: 'auth-secret-value-4713' };
const HEADER_NAME = 'X-Evidence-Token';

let site: http.Server;
let siteUrl: string;
let server: TestServer;
let key: string;
/** The completed job of the capture with evidence, and its bundle. */
let job: Record<string, any>;
let bundle: Buffer;
let files: Map<string, Buffer>;
/** The headers the page's own request came with. */
let pageRequest: http.IncomingHttpHeaders = {};

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (pathname === '/') pageRequest = req.headers;
    if (pathname === '/style.css') res.writeHead(200, { 'content-type': 'text/css' }).end(STYLE);
    else if (pathname === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(SCRIPT);
    else if (pathname === '/moved.png') res.writeHead(302, { location: '/pic.png' }).end();
    else if (pathname === '/pic.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL);
    else if (pathname === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'set-cookie': `seen=${SECRETS.cookie}-back` }).end(PAGE);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key } = await server.account());
  const created = await server.v1('POST', '/screenshot', key, {
    url: siteUrl,
    evidence: true,
    headers: { [HEADER_NAME]: SECRETS.header },
    cookies: [{ name: 'session', value: SECRETS.cookie }],
    http_auth: { username: 'alice', password: SECRETS.password },
  });
  expect(created.status).toBe(201);
  job = await waitForJob(server, key, ((await created.json()) as { job_id: string }).job_id);
  expect(job.status).toBe('completed');
  const answer = await fetch(job.evidence_url);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('application/wacz');
  bundle = Buffer.from(await answer.arrayBuffer());
  files = await unzip(bundle);
}, 60_000);

afterAll(async () => {
  await server?.close();
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
});

describe('a capture with evidence: true', () => {
  it('has an evidence_url under its image\'s capability name', () => {
    expect(job.evidence_url).toBe(`${job.screenshot_url}/evidence.wacz`);
  });

  it('packs the WACZ 1.1.1 layout: archive/, indexes/ and pages/ one level deep, the two JSON files at the root', () => {
    expect([...files.keys()].sort()).toEqual(['archive/data.warc.gz', 'datapackage-digest.json', 'datapackage.json', 'indexes/index.cdxj', 'pages/pages.jsonl']);
    for (const name of files.keys()) expect(name).toMatch(/^((archive|indexes|pages)\/[^/]+(\/[^/]+)?|datapackage(-digest)?\.json)$/);
  });

  it('lists every file in datapackage.json with its SHA-256 and size', () => {
    const datapackage = json('datapackage.json');
    expect(datapackage.wacz_version).toBe('1.1.1');
    expect(datapackage.mainPageUrl).toBe(siteUrl);
    const listed = datapackage.resources.map((r: { path: string }) => r.path).sort();
    expect(listed).toEqual(['archive/data.warc.gz', 'indexes/index.cdxj', 'pages/pages.jsonl']);
    for (const resource of datapackage.resources) {
      const data = files.get(resource.path)!;
      expect(resource).toMatchObject({ hash: `sha256:${crypto.createHash('sha256').update(data).digest('hex')}`, bytes: data.length });
    }
  });

  it('signs the digest of datapackage.json with the key GET /v1/evidence/public-key shows', async () => {
    const digest = json('datapackage-digest.json');
    const datapackage = files.get('datapackage.json')!;
    expect(digest.hash).toBe(`sha256:${crypto.createHash('sha256').update(datapackage).digest('hex')}`);
    expect(digest.signedData).toMatchObject({ hash: digest.hash, created: json('datapackage.json').created, software: expect.stringMatching(/^screenshot-appliance /) });
    const shown = await (await fetch(`${server.url}/v1/evidence/public-key`)).json();
    expect(shown).toEqual({ algorithm: 'Ed25519', public_key: digest.signedData.publicKey });
    const publicKey = crypto.createPublicKey({ key: Buffer.from(shown.public_key, 'base64'), format: 'der', type: 'spki' });
    expect(crypto.verify(null, Buffer.from(digest.hash), publicKey, Buffer.from(digest.signedData.signature, 'base64'))).toBe(true);
  });

  it('keeps its signing key in the data directory, readable by the service alone', () => {
    expect(fs.statSync(path.join(server.dataDir, EVIDENCE_KEY_FILE)).mode & 0o777).toBe(0o600);
  });

  it('indexes the page, its stylesheet, image and script with filename, offset and length of records that hold them', () => {
    const lines = files.get('indexes/index.cdxj')!.toString().trim().split('\n');
    const entries = lines.map((line) => JSON.parse(line.slice(line.indexOf('{'))) as Record<string, string>);
    const byUrl = new Map(entries.map((entry) => [entry.url, entry]));
    for (const [url, body] of [[siteUrl, PAGE], [`${siteUrl}style.css`, STYLE], [`${siteUrl}app.js`, SCRIPT], [`${siteUrl}pic.png`, PIXEL]] as const) {
      const entry = byUrl.get(url)!;
      expect(entry, url).toMatchObject({ filename: 'data.warc.gz', status: '200' });
      const record = zlib.gunzipSync(files.get('archive/data.warc.gz')!.subarray(Number(entry.offset), Number(entry.offset) + Number(entry.length)));
      expect(record.toString('latin1')).toContain(`WARC-Target-URI: ${url}\r\n`);
      expect(record.includes(Buffer.from(body))).toBe(true);
    }
    expect(byUrl.has(`urn:view:${siteUrl}`)).toBe(true);
  });

  it('records a redirect as its own response, and no data: address as an exchange', () => {
    const entries = files.get('indexes/index.cdxj')!.toString().trim().split('\n').map((line) => JSON.parse(line.slice(line.indexOf('{'))) as Record<string, string>);
    expect(entries.find((entry) => entry.url === `${siteUrl}moved.png`)).toMatchObject({ status: '302' });
    expect(entries.filter((entry) => entry.url.startsWith('data:'))).toEqual([]);
  });

  it('holds the picture, the rendered HTML, the text and the job\'s metadata', () => {
    const warc = zlib.gunzipSync(files.get('archive/data.warc.gz')!);
    const picture = fs.readFileSync(path.join(server.dataDir, 'files', path.basename(job.screenshot_url)));
    expect(warc.includes(picture)).toBe(true);
    expect(warc.toString('utf8')).toContain('<p id="by-script">Written by the script</p>');
    expect(warc.toString('utf8')).toContain('WARC-Target-URI: urn:text:');
    expect(warc.toString('utf8')).toContain(`"job_id": "${job.job_id}"`);
  });

  it('leaves no trace of the request\'s headers, cookies or http_auth', () => {
    // They were sent: their absence is the bundle's doing.
    expect(pageRequest).toMatchObject({ [HEADER_NAME.toLowerCase()]: SECRETS.header, cookie: `session=${SECRETS.cookie}`, authorization: expect.stringMatching(/^Basic /) });
    const bytes = Buffer.concat([bundle, ...files.values(), zlib.gunzipSync(files.get('archive/data.warc.gz')!)]);
    const basic = Buffer.from(`alice:${SECRETS.password}`).toString('base64');
    for (const secret of [SECRETS.header, SECRETS.cookie, SECRETS.password, basic, HEADER_NAME, 'Authorization', 'Set-Cookie']) {
      expect(bytes.includes(Buffer.from(secret)), secret).toBe(false);
      expect(bytes.toString('latin1').toLowerCase().includes(secret.toLowerCase()), secret).toBe(false);
    }
  });
});

describe('POST /v1/evidence/verify', () => {
  it('finds the bundle valid and this appliance\'s', async () => {
    expect(await verify(bundle)).toEqual({
      valid: true,
      signed_by_this_appliance: true,
      created_at: json('datapackage.json').created,
      url: siteUrl,
      public_key: json('datapackage-digest.json').signedData.publicKey,
      problems: [],
    });
  });

  it('names the file whose digest broke when one byte of the archive changed', async () => {
    const warc = Buffer.from(files.get('archive/data.warc.gz')!);
    warc[warc.length >> 1] ^= 0x01;
    const answer = await verify(await zip(new Map(files).set('archive/data.warc.gz', warc)));
    expect(answer.valid).toBe(false);
    expect(answer.signed_by_this_appliance).toBe(false);
    expect(answer.problems).toEqual(['archive/data.warc.gz: its digest or size is not the one datapackage.json lists']);
  });

  it('says a bundle another key signed is not this appliance\'s', async () => {
    const other = crypto.generateKeyPairSync('ed25519');
    const digest = json('datapackage-digest.json');
    digest.signedData.publicKey = other.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    digest.signedData.signature = crypto.sign(null, Buffer.from(digest.hash), other.privateKey).toString('base64');
    const answer = await verify(await zip(new Map(files).set('datapackage-digest.json', Buffer.from(JSON.stringify(digest)))));
    expect(answer).toMatchObject({ valid: true, signed_by_this_appliance: false, public_key: digest.signedData.publicKey, problems: [] });
  });

  it('answers 413 for a bundle larger than it reads, before reading it', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${server.url}/v1/evidence/verify`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/wacz', 'content-length': String(VERIFY_MAX_BYTES + 1) },
      });
      request.on('response', (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => {
          request.destroy();
          resolve({ status: res.statusCode!, body });
        });
      });
      request.on('error', reject);
      request.write(Buffer.alloc(1024));
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ error: 'Payload too large', message: 'The bundle is larger than 128 MB' });
  });

  it('answers 415 for a body that is not a bundle', async () => {
    const answer = await server.v1('POST', '/evidence/verify', key, 'hello', { 'content-type': 'text/plain' });
    expect(answer.status).toBe(415);
    expect(await answer.json()).toEqual({ error: 'Unsupported media type', message: 'Content-Type must be application/wacz or application/zip' });
  });
});

describe('a capture without evidence', () => {
  it('has no evidence_url', async () => {
    const created = await server.v1('POST', '/screenshot', key, { url: siteUrl });
    const ended = await waitForJob(server, key, ((await created.json()) as { job_id: string }).job_id);
    expect(ended.status).toBe('completed');
    expect(ended).not.toHaveProperty('evidence_url');
  });
});

// Last: it stops the page's server, so the replay can only come from the bundle.
describe('the bundle in ReplayWeb.page', () => {
  const REPLAY_DIR = path.resolve('node_modules/replaywebpage');
  let replay: http.Server;

  afterAll(async () => {
    replay?.closeAllConnections();
    await new Promise((resolve) => replay?.close(resolve));
  });

  it('replays the page, with the page\'s server stopped, as the job\'s picture shows it (≤ 1 % of pixels differ)', async () => {
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
    const picture = await sharp(fs.readFileSync(path.join(server.dataDir, 'files', path.basename(job.screenshot_url)))).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const { width, height } = picture.info;
    const embed = `<!doctype html><html><head><style>html, body { margin: 0 } replay-web-page { display: block; width: ${width}px; height: ${height}px }</style>
<script src="/ui.js"></script></head><body><replay-web-page source="/bundle.wacz" url="${siteUrl}" embed="replayonly"></replay-web-page></body></html>`;
    replay = http.createServer((req, res) => {
      const pathname = new URL(req.url ?? '/', 'http://x').pathname;
      if (pathname === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(embed);
      else if (pathname === '/ui.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(path.join(REPLAY_DIR, 'ui.js')));
      else if (pathname === '/replay/sw.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(path.join(REPLAY_DIR, 'sw.js')));
      else if (pathname === '/bundle.wacz') res.writeHead(200, { 'content-type': 'application/wacz', 'content-length': bundle.length }).end(req.method === 'HEAD' ? undefined : bundle);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => replay.listen(0, '127.0.0.1', resolve));
    const browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), args: BASE_ARGS, timeout: 30_000 });
    try {
      const page = await browser.newPage({ viewport: { width, height } });
      await page.goto(`http://127.0.0.1:${(replay.address() as AddressInfo).port}/`);
      // The replay's frame may be loaded again once its service worker is in charge: each try finds it anew.
      // Its first load may come before the worker took charge of /replay/ (a busy machine): then the
      // page is loaded again, under the worker, every 15 s.
      const deadline = Date.now() + 60_000;
      let reloadAt = Date.now() + 15_000;
      for (let shown = false; !shown; await new Promise((resolve) => setTimeout(resolve, 200))) {
        const replayed = page.frames().filter((frame) => frame.url().includes(`mp_/${siteUrl}`));
        if (replayed.length === 0 && Date.now() > reloadAt) {
          reloadAt = Date.now() + 15_000;
          await page.reload().catch(() => undefined);
        }
        const done = () => document.getElementById('by-script')?.textContent === 'Written by the script' && [...document.images].every((i) => i.complete && i.naturalWidth > 0);
        for (const frame of replayed) shown ||= await frame.evaluate(done).catch(() => false);
        if (!shown && Date.now() > deadline) throw new Error(`the page was not replayed; frames: ${page.frames().map((f) => f.url()).join(', ')}`);
      }
      const shot = await sharp(await page.screenshot({ clip: { x: 0, y: 0, width, height } })).ensureAlpha().raw().toBuffer();
      const differing = pixelmatch(picture.data, shot, undefined, width, height, { threshold: 0.1 });
      expect(differing / (width * height)).toBeLessThanOrEqual(0.01);
    } finally {
      await browser.close();
    }
  }, 90_000);
});

function json(name: string): any {
  return JSON.parse(files.get(name)!.toString('utf8'));
}

async function verify(data: Buffer): Promise<any> {
  const answer = await fetch(`${server.url}/v1/evidence/verify`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/wacz' }, body: new Uint8Array(data) });
  expect(answer.status).toBe(200);
  return answer.json();
}

async function unzip(data: Buffer): Promise<Map<string, Buffer>> {
  const archive = await yauzl.fromBufferPromise(data, { lazyEntries: true });
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    archive.on('error', reject);
    archive.on('end', resolve);
    archive.on('entry', (entry: yauzl.Entry) => {
      archive.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          out.set(entry.fileName, Buffer.concat(chunks));
          archive.readEntry();
        });
      });
    });
    archive.readEntry();
  });
  return out;
}

function zip(entries: Map<string, Buffer>): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (const [name, data] of entries) archive.addBuffer(data, name);
  archive.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    archive.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    archive.outputStream.on('error', reject);
    archive.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}
