import { BatchRequest, MAX_BATCH_ITEMS, MAX_MATCHED_URL_LENGTH } from '../contract/batches.js';
import { httpUrl } from '../contract/http-url.js';
import { validateBody } from '../contract/validate.js';
import { ValidationError } from '../domain-errors.js';
import type { CreateParams } from '../jobs/create-params.js';
import { parseScreenshotParams } from './screenshot-params.js';

/** A valid POST /v1/batches: its items, or the sitemap to read them from; and where batch.completed goes. */
export type BatchParams = { callback_url: string | null } & (
  | { items: CreateParams[] }
  | { sitemap: string; include: RegExp | null; exclude: RegExp | null; shared: Record<string, unknown> }
);

/**
 * Validates a POST /v1/batches body whole before anything is queued: each item over the shared
 * options is a POST /v1/screenshot body, and the first that is not is a ValidationError naming
 * the item's index and its field (`items[3].url`). The batch's `callback_url` is its own
 * (batch.completed); an item's webhook is sent only when the item itself names one.
 */
export function parseBatchParams(body: unknown): BatchParams {
  const { items, sitemap, include, exclude, callback_url: callbackUrl, ...shared } = validateBody(BatchRequest, body);
  const callback_url = callbackUrl === undefined ? null : httpUrl('callback_url', callbackUrl);
  if ((items === undefined) === (sitemap === undefined)) throw new ValidationError('give either items or sitemap: exactly one of them', 'items');
  if (sitemap === undefined) {
    for (const field of ['include', 'exclude'] as const) {
      if ({ include, exclude }[field] !== undefined) throw new ValidationError(`${field} applies only with sitemap`, field);
    }
    return { items: items!.map((item, index) => itemParams(shared as Record<string, unknown>, item as Record<string, unknown>, index)), callback_url };
  }
  // The shared options are checked now, on a stand-in page, so their refusal does not wait for the sitemap.
  const options = shared as Record<string, unknown>;
  itemParams(options, { url: 'http://sitemap.invalid/' }, null);
  return { sitemap: httpUrl('sitemap', sitemap), include: pattern('include', include), exclude: pattern('exclude', exclude), shared: options, callback_url };
}

/**
 * The items of a sitemap's URLs: those `include` matches and `exclude` does not, over the shared
 * options; a URL longer than MAX_MATCHED_URL_LENGTH, or not http(s), is left out. More than
 * MAX_BATCH_ITEMS left, or none, is a ValidationError naming `sitemap`.
 */
export function sitemapItems(params: Extract<BatchParams, { sitemap: string }>, urls: readonly string[]): CreateParams[] {
  const kept = urls.filter(
    (url) => url.length <= MAX_MATCHED_URL_LENGTH && /^https?:\/\//i.test(url) && (!params.include || params.include.test(url)) && !params.exclude?.test(url),
  );
  const picked = [...new Set(kept)];
  if (picked.length === 0) throw new ValidationError(`the sitemap lists no page to capture (${urls.length} URL(s) read, none kept by include and exclude)`, 'sitemap');
  if (picked.length > MAX_BATCH_ITEMS) {
    throw new ValidationError(`the sitemap lists ${picked.length} pages to capture; a batch holds at most ${MAX_BATCH_ITEMS}: narrow it with include or exclude`, 'sitemap');
  }
  return picked.flatMap((url, index) => {
    try {
      return [itemParams(params.shared, { url }, index)];
    } catch {
      // A URL the service would refuse (no host, say): the sitemap's fault, not the request's.
      return [];
    }
  });
}

/** One item over the shared options, as a POST /v1/screenshot of one device. */
function itemParams(shared: Record<string, unknown>, item: Record<string, unknown>, index: number | null): CreateParams {
  try {
    const params = parseScreenshotParams({ ...shared, ...item });
    if (params.devices.length !== 1) throw new ValidationError('a batch item captures one device; list the item once per device', 'devices');
    return params;
  } catch (err) {
    if (!(err instanceof ValidationError) || index === null) throw err;
    const field = `items[${index}]${err.field ? `.${err.field}` : ''}`;
    throw new ValidationError(`${field}: ${err.message}`, field);
  }
}

/**
 * `include` or `exclude` as a regular expression, or null. JavaScript's engine backtracks, so a
 * pattern whose run could grow past linear is refused: a repeated group holding a repetition or
 * an alternation (`(a+)+`, `(a|a)*`, the shapes of catastrophic backtracking) and a
 * backreference. With the pattern's length bounded (the schema) and the URLs' (sitemapItems),
 * what is left runs in time bounded by both.
 */
export function pattern(field: string, source: string | undefined): RegExp | null {
  if (source === undefined) return null;
  let compiled: RegExp;
  try {
    compiled = new RegExp(source);
  } catch (err) {
    throw new ValidationError(`${field} is not a valid regular expression: ${(err as Error).message}`, field);
  }
  if (mayBacktrack(source)) {
    throw new ValidationError(`${field} may not repeat a group that holds a repetition or an alternation, nor use a backreference (they can take exponential time)`, field);
  }
  return compiled;
}

/** Whether a pattern has a backreference, or a quantified group holding a quantifier or an alternation. */
function mayBacktrack(source: string): boolean {
  // Per open group: whether it holds a quantifier or an alternation so far.
  const open: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      if (!inClass && /[1-9k]/.test(source[i + 1] ?? '')) return true;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') {
      open.push(false);
      // (?: (?= (?! (?<= (?<! (?<name>: the group's kind, not a quantifier.
      if (source[i + 1] === '?') i = groupPrefixEnd(source, i);
    }
    else if (c === '|' && open.length) open[open.length - 1] = true;
    else if ('*+?{'.includes(c) && open.length) open[open.length - 1] = true;
    else if (c === ')') {
      const risky = open.pop() ?? false;
      if (risky && /[*+{]/.test(source[i + 1] ?? '')) return true;
      // A group's content counts in the group around it.
      if (risky && open.length) open[open.length - 1] = true;
    }
  }
  return false;
}

/** Where the `(?…` prefix of the group opened at `at` ends: `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`. */
function groupPrefixEnd(source: string, at: number): number {
  if (source[at + 2] !== '<') return at + 2;
  if (source[at + 3] === '=' || source[at + 3] === '!') return at + 3;
  const close = source.indexOf('>', at);
  return close === -1 ? at + 2 : close;
}
