import crypto from 'node:crypto';

import { ScreenshotRequest } from '../contract/v1.js';
import { ValidationError } from '../domain-errors.js';
import { ApiError } from './error-responses.js';

// Render links: GET /v1/render?url=…&<options>&key_id=…&signature=…, signed with the key's
// signing secret. The query is read once (queryPairs); the signature is checked on those pairs
// and the capture is asked for from the same pairs, never from a second reading of the URL.

/** Parameters of a render link that are not options of POST /v1/screenshot. */
export const RENDER_LINK_PARAMS = ['key_id', 'signature', 'expires', 'render_timeout'] as const;
/**
 * Options a render link refuses: their values are secrets (a header's token, a session cookie,
 * a password), and a link is meant for a public `<img>` tag, where its query can be read by
 * every reader of the page, its logs and its caches. POST /v1/screenshot takes them, sealed.
 */
export const SECRET_OPTIONS = ['headers', 'cookies', 'http_auth'] as const;

/**
 * Throws a 400 naming the first secret option in a render link's parameters, or `html` (no link
 * can bound a document) or `extract` or `evidence` (a link answers with the picture alone, so what
 * it extracted or recorded would be counted and stored for nobody to read).
 */
export function refuseSecretOptions(names: Iterable<string>): void {
  for (const name of names) {
    if (name === 'html') {
      throw new ValidationError('html cannot be given in a render link: a document does not fit in a link; send it with POST /v1/screenshot', 'html');
    }
    if (name === 'extract') {
      throw new ValidationError(
        'extract cannot be given in a render link: a link answers with the picture only; ask for extract with POST /v1/screenshot and read the outputs from GET /v1/screenshot/{job_id}',
        'extract',
      );
    }
    if (name === 'evidence') {
      throw new ValidationError(
        'evidence cannot be given in a render link: a link answers with the picture only; ask for evidence with POST /v1/screenshot and fetch the bundle at the job\'s evidence_url',
        'evidence',
      );
    }
    if ((SECRET_OPTIONS as readonly string[]).includes(name)) {
      throw new ValidationError(
        `${name} cannot be given in a render link: a link is public and its query readable by anyone who sees it; send ${name} with POST /v1/screenshot instead`,
        name,
      );
    }
  }
}
/** The longest a render link waits for its capture before answering 202, and its default. */
export const MAX_RENDER_TIMEOUT_SECONDS = 60;

/** The query's name=value pairs, decoded, in order; a name given twice is refused. */
export function queryPairs(raw: string): Array<[string, string]> {
  const pairs = [...new URLSearchParams(raw)];
  const seen = new Set<string>();
  for (const [name] of pairs) {
    if (seen.has(name)) throw new ValidationError(`${name} is given more than once`, name);
    seen.add(name);
  }
  return pairs;
}

/**
 * The text a render link's signature covers: every parameter but `signature`, each written
 * `encodeURIComponent(name)=encodeURIComponent(value)`, sorted by that name (code-unit order,
 * which for these ASCII texts is byte order, as `LC_ALL=C sort` gives), joined with `&`.
 */
export function canonicalQuery(pairs: ReadonlyArray<readonly [string, string]>): string {
  return pairs
    .filter(([name]) => name !== 'signature')
    .map(([name, value]) => [encodeURIComponent(name), encodeURIComponent(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** The lowercase hex HMAC-SHA256 of `canonical` under `secret`. */
export function signCanonical(secret: string, canonical: string): string {
  return crypto.createHmac('sha256', secret).update(canonical, 'utf8').digest('hex');
}

/**
 * Throws 403 unless `signature` is the signature of `pairs` under `secret`, compared in
 * constant time; or when the link's `expires` (Unix seconds) has passed.
 */
export function checkSignature(pairs: ReadonlyArray<readonly [string, string]>, secret: string, nowMs: number): void {
  const presented = pairs.find(([name]) => name === 'signature')?.[1];
  if (presented === undefined) throw new ApiError(403, 'The render link has no signature', 'Invalid signature');
  const expected = Buffer.from(signCanonical(secret, canonicalQuery(pairs)), 'hex');
  const given = /^[0-9a-fA-F]{64}$/.test(presented) ? Buffer.from(presented, 'hex') : Buffer.alloc(0);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    throw new ApiError(403, 'The render link signature does not match its parameters', 'Invalid signature');
  }
  const expires = pairs.find(([name]) => name === 'expires')?.[1];
  if (expires !== undefined) {
    if (!/^\d{1,12}$/.test(expires)) throw new ValidationError('expires must be a Unix time in seconds', 'expires');
    if (Number(expires) * 1000 < nowMs) {
      throw new ApiError(403, `The render link expired at ${new Date(Number(expires) * 1000).toISOString()}`, 'Link expired');
    }
  }
}

type FieldSchema = { type?: string; items?: { type?: string; enum?: unknown[] } };
const FIELDS = (ScreenshotRequest as unknown as { properties: Record<string, FieldSchema> }).properties;

/**
 * A render link's options as the body of POST /v1/screenshot would give them, typed by the
 * request schema: numbers and booleans (`true`/`false`, `1`/`0`) from their text, `devices` a
 * comma-separated list, `hide_selectors` one selector or a JSON array, and `clip` as JSON.
 * The secret options (SECRET_OPTIONS) are refused. Whatever does not read as its type is
 * passed on as text, for the schema to refuse naming the field.
 */
export function renderRequestBody(pairs: ReadonlyArray<readonly [string, string]>): { body: Record<string, unknown>; timeoutMs: number } {
  refuseSecretOptions(pairs.map(([name]) => name));
  const body: Record<string, unknown> = {};
  let timeoutSeconds = MAX_RENDER_TIMEOUT_SECONDS;
  for (const [name, value] of pairs) {
    if (name === 'render_timeout') {
      timeoutSeconds = renderTimeoutSeconds(value);
      continue;
    }
    if ((RENDER_LINK_PARAMS as readonly string[]).includes(name)) continue;
    body[name] = typedValue(name, value, FIELDS[name]);
  }
  return { body, timeoutMs: timeoutSeconds * 1000 };
}

/** A render link's `render_timeout`: whole seconds from 1 to the most, or a 400 naming it. */
export function renderTimeoutSeconds(value: string): number {
  if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > MAX_RENDER_TIMEOUT_SECONDS) {
    throw new ValidationError(`render_timeout must be a whole number of seconds from 1 to ${MAX_RENDER_TIMEOUT_SECONDS}`, 'render_timeout');
  }
  return Number(value);
}

function typedValue(name: string, value: string, schema: FieldSchema | undefined): unknown {
  switch (schema?.type) {
    case 'boolean':
      return value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;
    case 'integer':
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    case 'array':
      if (value.startsWith('[')) return json(name, value);
      // `devices=desktop,mobile`; a selector list (`a, b`) is one selector.
      return schema.items?.enum ? value.split(',').map((v) => v.trim()) : [value];
    case 'object':
      return json(name, value);
    default:
      return value;
  }
}

function json(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new ValidationError(`${name} must be given as JSON in a render link`, name);
  }
}

/** A field of POST /v1/screenshot as a render link's query text: the inverse of renderRequestBody. */
export function queryText(name: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (name === 'devices' && Array.isArray(value)) return value.join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** A signed render link for `params` (name → query text), as the panel copies it. */
export function signedRenderUrl(baseUrl: string, keyId: string, secret: string, params: Record<string, string>): string {
  const pairs: Array<[string, string]> = [...Object.entries(params), ['key_id', keyId]];
  const canonical = canonicalQuery(pairs);
  return `${baseUrl}/v1/render?${canonical}&signature=${signCanonical(secret, canonical)}`;
}
