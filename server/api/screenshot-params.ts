import type { HtmlDocument } from '../capture/capture-options.js';
import { HTML_JOB_URL, HTML_PLACEHOLDER_URL } from '../capture/options/html-document.js';
import { DEVICE_NAMES, type DeviceName } from '../capture/presets.js';
import { optionsOfRequest } from '../contract/capture-option-table.js';
import { httpUrl } from '../contract/http-url.js';
import { MAX_HTML_BYTES, MAX_INJECTED_BYTES, MAX_URL_LENGTH, ScreenshotRequest } from '../contract/v1.js';
import { validateBody } from '../contract/validate.js';
import { ValidationError } from '../domain-errors.js';
import type { CreateParams } from '../jobs/create-params.js';
import type { JobOptions, JobSecrets } from '../store/records/job-options.js';
import { timeZoneName } from '../time-zone.js';
import { checkStoragePath } from '../uploads/storage-path.js';

export { MAX_URL_LENGTH };

/** `devices` as asked: `all` expands to every device, duplicates collapse, order is kept. */
function expandDevices(devices: readonly string[]): DeviceName[] {
  return [...new Set(devices.flatMap((d) => (d === 'all' ? [...DEVICE_NAMES] : [d as DeviceName])))];
}

/**
 * Validates a POST /v1/screenshot body against ScreenshotRequest (defaults come from the
 * schema), then checks what a schema cannot: the URLs, and quality only with jpeg or webp.
 * A ValidationError names the offending field.
 */
export function parseScreenshotParams(body: unknown, defaultCacheTtl = 0): CreateParams {
  const input = validateBody(ScreenshotRequest, body) as Required<
    Omit<ScreenshotRequest, 'url' | 'html' | 'base_url' | 'width' | 'height' | 'quality' | 'callback_url' | 'cache_ttl' | 'storage_path'>
  > &
    ScreenshotRequest;
  if (input.quality !== undefined && (input.format === 'png' || input.format === 'pdf')) {
    throw new ValidationError('quality applies only to format jpeg or webp', 'quality');
  }
  const { url, address, html } = pageToRender(input);
  checkCombinations(input);
  const devices = expandDevices(input.devices);
  if (input.storage_path !== undefined) checkStoragePath(input.storage_path, devices.length);
  return {
    url,
    devices,
    full_page: input.full_page,
    googlebot: input.googlebot,
    callback_url: input.callback_url ? httpUrl('callback_url', input.callback_url) : null,
    width: input.width ?? null,
    height: input.height ?? null,
    format: input.format,
    quality: input.quality ?? null,
    ...jobOptions(input, new URL(address).hostname, html),
    cache_ttl: input.cache_ttl ?? defaultCacheTtl,
  };
}

/**
 * What the job renders: `url`, or the document of `html` (exactly one of them), rendered at
 * `base_url` or at HTML_PLACEHOLDER_URL. `url` is the job's, `address` the one the page is at.
 */
function pageToRender(input: ScreenshotRequest): { url: string; address: string; html?: HtmlDocument } {
  if (input.url !== undefined && input.html !== undefined) throw new ValidationError('give either url or html, not both', 'url');
  if (input.html === undefined) {
    if (input.base_url !== undefined) throw new ValidationError('base_url applies only with html', 'base_url');
    if (input.url === undefined) throw new ValidationError('url is required, or html instead: give exactly one of them', 'url');
    if (input.url.trim() === '') throw new ValidationError('url must be a non-empty string', 'url');
    const url = httpUrl('url', input.url);
    return { url, address: url };
  }
  if (Buffer.byteLength(input.html, 'utf8') > MAX_HTML_BYTES) {
    throw new ValidationError(`html must be at most ${MAX_HTML_BYTES} bytes of UTF-8`, 'html');
  }
  if (input.base_url === undefined) return { url: HTML_JOB_URL, address: HTML_PLACEHOLDER_URL, html: { document: input.html } };
  const base = new URL(httpUrl('base_url', input.base_url));
  // The document's request never carries a fragment; the address is matched without one.
  base.hash = '';
  return { url: HTML_JOB_URL, address: base.href, html: { document: input.html, baseUrl: base.href } };
}

/** Options that exclude one another, or that a format does not take. */
function checkCombinations(input: ScreenshotRequest): void {
  const refuse = (message: string, field: string) => {
    throw new ValidationError(message, field);
  };
  if (input.user_agent !== undefined && input.googlebot) refuse('user_agent cannot be combined with googlebot: true', 'user_agent');
  if (input.selector !== undefined && input.clip !== undefined) refuse('selector and clip cannot be combined; give one', 'clip');
  for (const field of ['selector', 'clip'] as const) {
    if (input[field] === undefined) continue;
    if (input.full_page) refuse(`${field} cannot be combined with full_page: true`, field);
    if (input.format === 'pdf') refuse(`${field} does not apply to format pdf`, field);
  }
  for (const field of ['image_width', 'image_height'] as const) {
    if (input[field] !== undefined && input.format === 'pdf') refuse(`${field} does not apply to format pdf`, field);
  }
  if (input.omit_background && (input.format === 'jpeg' || input.format === 'pdf')) {
    refuse(`omit_background applies only to format png or webp (${input.format} has no transparency)`, 'omit_background');
  }
  for (const field of ['styles', 'scripts'] as const) {
    const text = input[field];
    if (text !== undefined && Buffer.byteLength(text, 'utf8') > MAX_INJECTED_BYTES) {
      refuse(`${field} must be at most ${MAX_INJECTED_BYTES} bytes of UTF-8`, field);
    }
  }
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (FORBIDDEN_HEADERS.has(name.toLowerCase()) || /^proxy-/i.test(name) || /^sec-/i.test(name)) {
      refuse(`headers may not set ${name}: hop-by-hop headers, Host, Cookie (use cookies), Proxy-* and Sec-* are refused`, 'headers');
    }
     
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) refuse(`headers.${name} may not contain control characters`, 'headers');
  }
  (input.cookies ?? []).forEach((cookie, i) => {
    if (cookie.same_site === 'None' && !cookie.secure) refuse(`cookies[${i}] with same_site None needs secure: true`, 'cookies');
  });
  if (input.timezone !== undefined && timeZoneName(input.timezone) === null) {
    refuse(`timezone must be an IANA time zone such as Europe/Paris; ${input.timezone} is not one`, 'timezone');
  }
  if (input.locale !== undefined && !isLocale(input.locale)) {
    refuse(`locale must be a BCP 47 language tag such as fr-FR; ${input.locale} is not one`, 'locale');
  }
}

/** Headers a request may not set: the connection's own, and those the browser must own. */
const FORBIDDEN_HEADERS = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'cookie',
  'expect',
]);

function isLocale(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/**
 * The capture options of the request as a job keeps them (capture-option-table.ts): those its
 * record shows, and its secrets (sealed until it ends; null when it gave none) with `html`.
 */
function jobOptions(input: ScreenshotRequest, host: string, html: HtmlDocument | undefined): { options: JobOptions; secrets: JobSecrets | null } {
  const { options, secrets } = optionsOfRequest(input, host);
  const sealed: JobSecrets = { ...(html ? { html } : {}), ...secrets };
  return { options: options as JobOptions, secrets: Object.keys(sealed).length ? sealed : null };
}
