import crypto from 'node:crypto';

import { getSurt, WARCRecord, WARCSerializer } from 'warcio';
import yazl from 'yazl';

import type { RecordedExchange } from '../pipeline/page-exchanges.js';

// An evidence bundle: a WACZ 1.1.1 file (https://specs.webrecorder.net/wacz/1.1.1/) of one
// capture, its WARC records written by warcio, signed as the WACZ signing specification's
// anonymous signature (https://specs.webrecorder.net/wacz-auth/0.1.0/) with the appliance's
// Ed25519 key. The file names below are the layout validators check.

export const WARC_PATH = 'archive/data.warc.gz';
export const INDEX_PATH = 'indexes/index.cdxj';
export const PAGES_PATH = 'pages/pages.jsonl';
export const DATAPACKAGE_PATH = 'datapackage.json';
export const DIGEST_PATH = 'datapackage-digest.json';
export const WACZ_VERSION = '1.1.1';

/** The made-up addresses of what the capture itself made, as Webrecorder's crawler names its own. */
export const EVIDENCE_URNS = {
  screenshot: (url: string) => `urn:view:${url}`,
  html: (url: string) => `urn:dom:${url}`,
  text: (url: string) => `urn:text:${url}`,
  metadata: (url: string) => `urn:metadata:${url}`,
};

/** Response headers that describe the bytes on the wire, not the decoded body the browser gives: dropped, Content-Length set again. */
const WIRE_HEADERS = new Set(['content-encoding', 'transfer-encoding', 'content-length']);

/** What one bundle holds. */
export interface EvidenceContents {
  /** The address asked for. */
  url: string;
  /** The document captured, after redirects: the bundle's page. */
  finalUrl: string;
  title: string;
  /** When the capture was made, by the service's clock (ms since the epoch). */
  capturedAt: number;
  exchanges: readonly RecordedExchange[];
  picture: { data: Buffer; contentType: string };
  /** The page's HTML after rendering, when it was kept. */
  html: string | null;
  /** The page's visible text. */
  text: string | null;
  /** The job as it was asked and ended (no secrets): a metadata record in JSON. */
  metadata: Record<string, unknown>;
  /** `screenshot-appliance <version>`. */
  software: string;
}

/** Signs a bundle's `datapackage.json` digest (EvidenceKey). */
export interface BundleSigner {
  /** base64 of the SubjectPublicKeyInfo (DER). */
  readonly publicKey: string;
  /** base64 signature of the text. */
  sign(text: string): string;
}

/** The signed part of `datapackage-digest.json` (the anonymous signature). */
export interface SignedData {
  hash: string;
  created: string;
  software: string;
  signature: string;
  publicKey: string;
}

/** A file of the package as `datapackage.json` lists it. */
export interface PackageResource {
  name: string;
  path: string;
  hash: string;
  bytes: number;
}

export const sha256 = (data: Buffer | string) => `sha256:${crypto.createHash('sha256').update(data).digest('hex')}`;

/** The WACZ of one capture, signed by `signer`, as the bytes of a ZIP file. */
export async function packEvidence(contents: EvidenceContents, signer: BundleSigner): Promise<Buffer> {
  const created = new Date(contents.capturedAt).toISOString();
  const { warc, index } = await writeWarc(contents, created);
  const pages = pagesOf(contents, created);
  const files: Array<[string, Buffer]> = [
    [WARC_PATH, warc],
    [INDEX_PATH, Buffer.from(index)],
    [PAGES_PATH, Buffer.from(pages)],
  ];
  const datapackage = Buffer.from(
    JSON.stringify(
      {
        profile: 'data-package',
        wacz_version: WACZ_VERSION,
        title: contents.title || contents.finalUrl,
        software: contents.software,
        created,
        mainPageUrl: contents.finalUrl,
        mainPageDate: created,
        resources: files.map(([path, data]): PackageResource => ({ name: path.split('/').pop()!, path, hash: sha256(data), bytes: data.length })),
      },
      null,
      2,
    ),
  );
  const hash = sha256(datapackage);
  const signedData: SignedData = { hash, created, software: contents.software, signature: signer.sign(hash), publicKey: signer.publicKey };
  const digest = Buffer.from(JSON.stringify({ path: DATAPACKAGE_PATH, hash, signedData }, null, 2));
  return zip([...files, [DATAPACKAGE_PATH, datapackage], [DIGEST_PATH, digest]], new Date(contents.capturedAt));
}

/** One gzip member per record, and the CDXJ lines of the records a replay looks up (responses and resources). */
async function writeWarc(contents: EvidenceContents, created: string): Promise<{ warc: Buffer; index: string }> {
  const members: Buffer[] = [];
  const lines: string[] = [];
  let offset = 0;
  const add = async (record: WARCRecord, indexed?: { url: string; mime: string; status?: number }) => {
    const member = Buffer.from(await WARCSerializer.serialize(record, { gzip: true }));
    if (indexed) {
      const date = record.warcHeaders.headers.get('WARC-Date') ?? created;
      const fields = {
        url: indexed.url,
        mime: indexed.mime,
        ...(indexed.status === undefined ? {} : { status: String(indexed.status) }),
        digest: record.warcHeaders.headers.get('WARC-Payload-Digest') ?? undefined,
        length: String(member.length),
        offset: String(offset),
        filename: WARC_PATH.split('/').pop(),
      };
      lines.push(`${urlKey(indexed.url)} ${timestamp14(date)} ${JSON.stringify(fields)}`);
    }
    members.push(member);
    offset += member.length;
  };

  await add(WARCRecord.createWARCInfo({ filename: 'data.warc.gz', date: created, warcVersion: 'WARC/1.1' }, { software: contents.software, format: 'WARC File Format 1.1' }));
  for (const exchange of contents.exchanges) {
    const date = new Date(exchange.sentAt).toISOString();
    const { path, host } = partsOf(exchange.url);
    const request = WARCRecord.create(
      {
        url: exchange.url,
        date,
        type: 'request',
        warcVersion: 'WARC/1.1',
        statusline: `${exchange.method} ${path} HTTP/1.1`,
        // Chromium reports the request without its Host line, which a WARC request record starts with.
        httpHeaders: host && !Object.keys(exchange.requestHeaders).some((name) => name.toLowerCase() === 'host') ? { Host: host, ...exchange.requestHeaders } : exchange.requestHeaders,
      },
      bytes(exchange.requestBody === null ? Buffer.alloc(0) : Buffer.from(exchange.requestBody)),
    );
    const body = exchange.body ?? Buffer.alloc(0);
    const response = WARCRecord.create(
      {
        url: exchange.url,
        date,
        type: 'response',
        warcVersion: 'WARC/1.1',
        statusline: `HTTP/1.1 ${exchange.status} ${exchange.statusText}`.trimEnd(),
        httpHeaders: responseHeaders(exchange.responseHeaders, body.length),
        warcHeaders: {
          'WARC-Concurrent-To': request.warcHeaders.headers.get('WARC-Record-ID')!,
          ...(exchange.bodyMissing ? { 'WARC-Truncated': exchange.bodyMissing === 'too large' ? 'length' : 'unspecified' } : {}),
        },
      },
      bytes(body),
    );
    const mime = (exchange.responseHeaders['content-type'] ?? exchange.responseHeaders['Content-Type'] ?? '').split(';')[0]!.trim();
    await add(response, { url: exchange.url, mime, status: exchange.status });
    await add(request);
  }
  const page = contents.finalUrl;
  const resource = async (url: string, contentType: string, data: Buffer, type: 'resource' | 'metadata' = 'resource') => {
    const record = WARCRecord.create(
      { url, date: created, type, warcVersion: 'WARC/1.1', warcHeaders: { 'Content-Type': contentType, 'WARC-Refers-To-Target-URI': page } },
      bytes(data),
    );
    await add(record, type === 'resource' ? { url, mime: contentType.split(';')[0]! } : undefined);
  };
  await resource(EVIDENCE_URNS.screenshot(page), contents.picture.contentType, contents.picture.data);
  if (contents.html !== null) await resource(EVIDENCE_URNS.html(page), 'text/html; charset=utf-8', Buffer.from(contents.html));
  if (contents.text !== null) await resource(EVIDENCE_URNS.text(page), 'text/plain; charset=utf-8', Buffer.from(contents.text));
  await resource(EVIDENCE_URNS.metadata(page), 'application/json', Buffer.from(JSON.stringify(contents.metadata, null, 2)), 'metadata');
  return { warc: Buffer.concat(members), index: `${lines.sort().join('\n')}\n` };
}

/** `pages.jsonl`: its header line, then the one page of the bundle. */
function pagesOf(contents: EvidenceContents, created: string): string {
  const header = { format: 'json-pages-1.0', id: 'pages', title: 'All Pages' };
  const page = { id: crypto.randomUUID(), url: contents.finalUrl, ts: created, title: contents.title, ...(contents.text ? { text: contents.text } : {}) };
  return `${JSON.stringify(header)}\n${JSON.stringify(page)}\n`;
}

/** The response's headers for its decoded body; a header repeated (joined by newlines in CDP) joined by commas. */
function responseHeaders(headers: Record<string, string>, length: number): Array<[string, string]> {
  const kept: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (WIRE_HEADERS.has(name.toLowerCase())) continue;
    kept.push([name, value.split('\n').join(', ')]);
  }
  kept.push(['Content-Length', String(length)]);
  return kept;
}

function partsOf(url: string): { path: string; host: string | null } {
  try {
    const parsed = new URL(url);
    return { path: `${parsed.pathname}${parsed.search}`, host: parsed.host || null };
  } catch {
    return { path: url, host: null };
  }
}

/** The index's sort key of an address: its SURT, or the address itself when it has none (a urn:). */
function urlKey(url: string): string {
  try {
    return getSurt(url);
  } catch {
    return url;
  }
}

function* bytes(data: Buffer): Iterable<Uint8Array> {
  if (data.length) yield data;
}

/** `2026-11-28T21:30:00.123Z` → `20261128213000`. */
function timestamp14(iso: string): string {
  return iso.replace(/[^0-9]/g, '').slice(0, 14);
}

/** The ZIP file: the archive stored as it is (already gzipped, and read by range), the rest deflated. */
function zip(files: Array<[string, Buffer]>, mtime: Date): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (const [path, data] of files) archive.addBuffer(data, path, { mtime, compress: path !== WARC_PATH });
  archive.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    archive.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    archive.outputStream.on('error', reject);
    archive.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}
