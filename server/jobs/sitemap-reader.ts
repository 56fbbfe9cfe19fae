import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import zlib from 'node:zlib';

import got from 'got';

import { EgressDeniedError, type EgressPolicy } from '../egress/policy.js';

/** Most bytes read of one sitemap file as sent (compressed or not). */
export const MAX_SITEMAP_BYTES = 10 * 1024 * 1024;
/** Most bytes of one sitemap once gunzipped: the sitemaps protocol's own bound. */
export const MAX_SITEMAP_XML_BYTES = 50 * 1024 * 1024;
/** Most sitemaps one index may name that are read. */
export const MAX_SITEMAP_PARTS = 50;
/** Most URLs read from all the files of one sitemap, before include and exclude. */
export const MAX_SITEMAP_URLS = 50_000;
/** How long reading a sitemap may take, its index and every part together, ms. */
const READ_TIMEOUT_MS = 30_000;

/** A sitemap that could not be read: unreachable, refused by the egress guard, not a sitemap, or past a bound. */
export class SitemapUnreadableError extends Error {
  override readonly name = 'SitemapUnreadableError';
  constructor(readonly url: string, reason: string) {
    super(`the sitemap ${url} could not be read: ${reason}`);
  }
}

/** `<loc>…</loc>`: no nested quantifier, so the scan is linear in the text. */
const LOC = /<loc>([^<]*)<\/loc>/g;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The `<loc>` values of a sitemap's XML, entities decoded, at most `max`. */
export function sitemapLocations(xml: string, max: number): string[] {
  const found: string[] = [];
  for (const match of xml.matchAll(LOC)) {
    if (found.length >= max) break;
    found.push(match[1].trim().replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ENTITIES[name]));
  }
  return found;
}

/**
 * Reads sitemaps (https://www.sitemaps.org/protocol.html) for POST /v1/batches: a `<urlset>`, or a
 * `<sitemapindex>` whose sitemaps (up to MAX_SITEMAP_PARTS, one level) are read in turn, each
 * plain or gzipped. Every fetch goes through the egress guard as a webhook does: the URL is
 * checked and the connection pinned to the address vetted; redirects are not followed, nothing
 * is retried, and every file is cut at its bounds (MAX_SITEMAP_BYTES as sent, MAX_SITEMAP_XML_BYTES
 * unzipped), so a hostile site can make the service read only so much.
 */
export class SitemapReader {
  private readonly agents = { http: new http.Agent({ keepAlive: false }), https: new https.Agent({ keepAlive: false }) };

  constructor(private readonly policy: EgressPolicy) {}

  /** The page URLs the sitemap at `url` lists, in its order, at most MAX_SITEMAP_URLS. */
  async read(url: string): Promise<string[]> {
    const deadline = Date.now() + READ_TIMEOUT_MS;
    const xml = await this.fetchXml(url, deadline);
    if (!/<sitemapindex[\s>]/.test(xml.slice(0, 4096))) return sitemapLocations(xml, MAX_SITEMAP_URLS);
    const parts = sitemapLocations(xml, MAX_SITEMAP_PARTS + 1);
    if (parts.length > MAX_SITEMAP_PARTS) throw new SitemapUnreadableError(url, `the index names more than ${MAX_SITEMAP_PARTS} sitemaps`);
    const urls: string[] = [];
    for (const part of parts) {
      urls.push(...sitemapLocations(await this.fetchXml(part, deadline), MAX_SITEMAP_URLS - urls.length));
      if (urls.length >= MAX_SITEMAP_URLS) break;
    }
    return urls;
  }

  /** One sitemap file's XML, gunzipped when it is gzip (by its first bytes, whatever it is called). */
  private async fetchXml(url: string, deadline: number): Promise<string> {
    const left = deadline - Date.now();
    if (left <= 0) throw new SitemapUnreadableError(url, `reading the sitemap took more than ${READ_TIMEOUT_MS / 1000} s`);
    const body = await this.fetch(url, left);
    if (body[0] !== 0x1f || body[1] !== 0x8b) return body.toString('utf8');
    try {
      return zlib.gunzipSync(body, { maxOutputLength: MAX_SITEMAP_XML_BYTES }).toString('utf8');
    } catch (err) {
      const past = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      throw new SitemapUnreadableError(url, past ? `it is larger than ${MAX_SITEMAP_XML_BYTES} bytes unzipped` : 'its gzip is damaged');
    }
  }

  private async fetch(url: string, timeoutMs: number): Promise<Buffer> {
    let target: Awaited<ReturnType<EgressPolicy['checkUrl']>>;
    try {
      target = await this.policy.checkUrl(url);
    } catch (err) {
      throw new SitemapUnreadableError(url, err instanceof EgressDeniedError ? err.message : `its host does not resolve (${(err as Error).message})`);
    }
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const stream = got.stream(target.url, {
        dnsLookup: pinned,
        agent: this.agents,
        timeout: { request: timeoutMs },
        followRedirect: false,
        retry: { limit: 0 },
        throwHttpErrors: false,
        decompress: false,
      });
      const fail = (reason: string) => {
        stream.destroy();
        reject(new SitemapUnreadableError(url, reason));
      };
      stream.once('response', (response: http.IncomingMessage) => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status >= 300) fail(`it answered ${status}`);
      });
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_SITEMAP_BYTES) return fail(`it is larger than ${MAX_SITEMAP_BYTES} bytes`);
        chunks.push(chunk);
      });
      stream.on('error', (err: Error & { code?: string }) => fail(`${err.code ?? err.name}: ${err.message}`));
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  }
}
