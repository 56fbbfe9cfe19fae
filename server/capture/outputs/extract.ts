import fs from 'node:fs';
import { createRequire } from 'node:module';

import { withDeadline } from '../../deadline.js';
import { CaptureError } from '../capture-errors.js';
import { type ExtractArgs, extractInPage, type PageExtract } from '../in-page/extract-page.js';
import { evaluateCall, type PageDriver } from '../pipeline/page-driver.js';
import type { CaptureWarning } from './capture-warnings.js';
import { EXTRACT_KINDS, type ExtractKind, MAX_CONTENT_BYTES, MAX_EXTRACT_STRING, MAX_LINKS, MAX_METADATA_ITEMS } from './extract-bounds.js';

// Outputs computed from the render that made the picture, in the page before it is closed:
// the main content as Markdown and as plain text (Mozilla's Readability on a clone of the
// document, then Turndown with GitHub-flavoured Markdown), the page's metadata, and its links.
// Extraction never fails a capture: what could not be extracted is an `extract_failed` warning.

/** Longest the in-page extraction may take. */
const EXTRACT_TIMEOUT_MS = 15_000;

export interface PageMetadata {
  title: string;
  description: string;
  language: string;
  canonical_url: string;
  open_graph: Record<string, string>;
  twitter: Record<string, string>;
  favicon: string;
  icons: Array<{ url: string; rel: string; sizes: string; type: string }>;
  feeds: Array<{ url: string; title: string; type: string }>;
  published_time: string;
  modified_time: string;
}

export interface PageLink {
  url: string;
  text: string;
}

/** What a capture extracted; an output not asked for, or that failed, is absent. */
export interface Extracted {
  markdown?: string;
  text?: string;
  metadata?: PageMetadata;
  links?: PageLink[];
  linksTruncated?: boolean;
  /** One `extract_failed` warning naming what could not be extracted, or none. */
  warnings: CaptureWarning[];
}

export { EXTRACT_KINDS, type ExtractKind };

let script: string | undefined;

/** The libraries, each in its own scope, and extractInPage, as one expression taking its arguments. */
function pageScript(): string {
  if (script) return script;
  const require = createRequire(import.meta.url);
  const lib = (name: string) => fs.readFileSync(require.resolve(name), 'utf8');
  const scoped = (source: string) => `(function () { var module = { exports: {} }; var exports = module.exports; var define; ${source}\n; return module.exports; })()`;
  script =
    `(function (args) { 'use strict';` +
    `var Readability = ${scoped(lib('@mozilla/readability/Readability.js'))};` +
    `var Turndown = ${scoped(lib('turndown/lib/turndown.browser.umd.js'))};` +
    `var gfm = ${scoped(lib('turndown-plugin-gfm/lib/turndown-plugin-gfm.browser.cjs.js'))}.gfm;` +
    `return (${extractInPage.toString()})(Readability, Turndown, gfm, args); })`;
  return script;
}

/** Runs the extraction `kinds` ask for in the page behind `driver`; never throws. */
export async function extractOutputs(driver: PageDriver, kinds: readonly ExtractKind[]): Promise<Extracted> {
  const args: ExtractArgs = {
    markdown: kinds.includes('markdown'),
    text: kinds.includes('text'),
    metadata: kinds.includes('metadata'),
    links: kinds.includes('links'),
    maxLinks: MAX_LINKS,
    maxString: MAX_EXTRACT_STRING,
    maxItems: MAX_METADATA_ITEMS,
  };
  let raw: PageExtract;
  try {
    raw = await withDeadline(runInPage(driver, args), EXTRACT_TIMEOUT_MS, () => new Error(`it took longer than ${EXTRACT_TIMEOUT_MS} ms`));
  } catch (err) {
    return { warnings: [failedWarning(kinds.map((kind) => `${kind}: ${reason(err)}`))] };
  }
  return checked(raw, args);
}

/** The extraction's answer is measured in the page before it is returned (evaluateCall). */
async function runInPage(driver: PageDriver, args: ExtractArgs): Promise<PageExtract> {
  try {
    return await evaluateCall<PageExtract>(driver, pageScript(), args);
  } catch (err) {
    throw err instanceof CaptureError ? err : new Error(String((err as Error).message ?? err).split('\n')[0]);
  }
}

/**
 * The page's answer, checked and bounded again here: the page's own scripts ran alongside the
 * extraction and may have changed what it returns.
 */
function checked(raw: unknown, args: ExtractArgs): Extracted {
  const failed: string[] = [];
  const out: Extracted = { warnings: [] };
  const value = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const pageFailed = Array.isArray(value.failed) ? value.failed.filter((f): f is string => typeof f === 'string').slice(0, 4) : [];
  const named = (kind: ExtractKind) => pageFailed.find((f) => f.startsWith(`${kind}:`));
  for (const kind of ['markdown', 'text'] as const) {
    if (!args[kind]) continue;
    if (typeof value[kind] === 'string') out[kind] = cutBytes(value[kind], MAX_CONTENT_BYTES);
    else failed.push(named(kind) ?? `${kind}: nothing was returned`);
  }
  if (args.metadata) {
    const metadata = metadataOf(value.metadata);
    if (metadata) out.metadata = metadata;
    else failed.push(named('metadata') ?? 'metadata: nothing was returned');
  }
  if (args.links) {
    const links = value.links as { links?: unknown; truncated?: unknown } | undefined;
    if (links && Array.isArray(links.links)) {
      const list = links.links.flatMap((l: unknown) => {
        const link = l as Record<string, unknown> | null;
        return link && typeof link.url === 'string' && /^https?:/i.test(link.url) ? [{ url: str(link.url), text: str(link.text) }] : [];
      });
      const unique = [...new Map(list.map((l) => [l.url, l])).values()];
      out.links = unique.slice(0, MAX_LINKS);
      out.linksTruncated = links.truncated === true || unique.length > MAX_LINKS;
    } else {
      failed.push(named('links') ?? 'links: nothing was returned');
    }
  }
  if (failed.length) out.warnings.push(failedWarning(failed));
  return out;
}

function metadataOf(raw: unknown): PageMetadata | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const m = raw as Record<string, unknown>;
  const map = (v: unknown): Record<string, string> =>
    Object.fromEntries(
      Object.entries(v && typeof v === 'object' && !Array.isArray(v) ? v : {})
        .filter(([, x]) => typeof x === 'string')
        .slice(0, MAX_METADATA_ITEMS)
        .map(([k, x]) => [k.slice(0, 100), str(x)]),
    );
  const list = <T>(v: unknown, shape: (o: Record<string, unknown>) => T): T[] =>
    (Array.isArray(v) ? v : [])
      .filter((o): o is Record<string, unknown> => !!o && typeof o === 'object')
      .slice(0, MAX_METADATA_ITEMS)
      .map(shape);
  return {
    title: str(m.title),
    description: str(m.description),
    language: str(m.language),
    canonical_url: str(m.canonical_url),
    open_graph: map(m.open_graph),
    twitter: map(m.twitter),
    favicon: str(m.favicon),
    icons: list(m.icons, (o) => ({ url: str(o.url), rel: str(o.rel), sizes: str(o.sizes), type: str(o.type) })),
    feeds: list(m.feeds, (o) => ({ url: str(o.url), title: str(o.title), type: str(o.type) })),
    published_time: str(m.published_time),
    modified_time: str(m.modified_time),
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v.slice(0, MAX_EXTRACT_STRING) : '');

function cutBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  // A cut in the middle of a character drops it (the decoder's replacement is stripped).
  return bytes.subarray(0, max).toString('utf8').replace(/\uFFFD$/, '');
}

function reason(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 200);
}

function failedWarning(failed: string[]): CaptureWarning {
  return { code: 'extract_failed', message: `Could not extract ${failed.join('; ')}` };
}
