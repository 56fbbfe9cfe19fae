import type { CaptureCookie, CaptureOptions } from '../capture/capture-options.js';
import { EXTRACT_KINDS } from '../capture/outputs/extract-bounds.js';
import { timeZoneName } from '../time-zone.js';
import { ScreenshotRequest } from './v1.js';

// Each capture option, declared once: its name in a request (snake_case, as the API, the admin
// views and a monitor's request spell it), its name in a job's options (camelCase, as the engine
// and the job record take it), where a job keeps it, and how a request's value becomes the
// option's. The request's mapping (api/screenshot-params.ts) and the record's (store/records/
// job-options.ts) both follow from this table; the schema of each field stays in v1.ts, the
// source of validation. A new option is one line here, plus its schema and what the engine does.

/** Every option a job's capture may be given, by its name in the options. */
export type AnyJobOption = CaptureOptions & {
  /** Device scale factor overriding the preset's. */
  scale?: number;
  /** Also upload the image to the account's storage destination (`upload`, or implied by `storage_path`). */
  upload?: true;
  /** The upload's key template (`storage_path`); the default key when absent. */
  storagePath?: string;
  /** The saved login (`login_…`) the page is captured with. */
  login?: string;
};

/** What the request's value is read with: the whole request, and the host of the page it renders. */
export interface RequestContext {
  input: ScreenshotRequest;
  host: string;
}

/** One capture option as the API and the job record spell and keep it. */
export interface CaptureOptionEntry {
  /** Its name in a request, and in the admin API's view of a job's options. */
  request: string;
  /** Its name in a job's options. */
  option: keyof AnyJobOption;
  /**
   * `record`: kept in the job record in clear and shown; `secret`: sealed with the job's secrets
   * until it ends, never stored in clear, shown or logged (only names are said of it).
   */
  kept: 'record' | 'secret';
  /**
   * A large option only the capture reads: its turn to stay in the record while
   * RECORD_OPTIONS_BYTES allow (1 first); past them it is sealed apart until the job ends.
   */
  runOnly?: number;
  /** Not a field of POST /v1/screenshot: a monitor's own (MonitorRequest), added to its jobs' options. */
  monitorOnly?: true;
  /**
   * The option's value for the request's (undefined: not kept). Without it, the value as given.
   * Either way a value equal to the field's schema default is dropped first, so defaults are never stored.
   */
  fromRequest?: (value: never, request: RequestContext) => unknown;
}

/** The capture options, in the order a job's options and their view list them. */
export const CAPTURE_OPTIONS = [
  { request: 'wait_until', option: 'waitUntil', kept: 'record' },
  { request: 'settle_timeout', option: 'settleTimeoutMs', kept: 'record' },
  { request: 'delay', option: 'delayMs', kept: 'record' },
  { request: 'wait_for_selector', option: 'waitForSelector', kept: 'record', runOnly: 1 },
  { request: 'selector', option: 'selector', kept: 'record', runOnly: 2 },
  { request: 'clip', option: 'clip', kept: 'record' },
  { request: 'scale', option: 'scale', kept: 'record' },
  { request: 'hide_selectors', option: 'hideSelectors', kept: 'record', runOnly: 5 },
  { request: 'mask_selectors', option: 'maskSelectors', kept: 'record', runOnly: 6, monitorOnly: true },
  { request: 'styles', option: 'styles', kept: 'record', runOnly: 7 },
  { request: 'scripts', option: 'scripts', kept: 'record', runOnly: 8 },
  { request: 'click_selector', option: 'clickSelector', kept: 'record', runOnly: 3 },
  { request: 'block_ads', option: 'blockAds', kept: 'record' },
  { request: 'block_trackers', option: 'blockTrackers', kept: 'record' },
  { request: 'block_cookie_banners', option: 'blockCookieBanners', kept: 'record' },
  { request: 'dark_mode', option: 'darkMode', kept: 'record' },
  { request: 'reduced_motion', option: 'reducedMotion', kept: 'record' },
  { request: 'media_type', option: 'mediaType', kept: 'record' },
  { request: 'user_agent', option: 'userAgent', kept: 'record', runOnly: 4 },
  // As Intl spells it (utc → UTC): Chromium's override is case-sensitive (time-zone.ts).
  { request: 'timezone', option: 'timezone', kept: 'record', fromRequest: (v?: string) => (v === undefined ? undefined : (timeZoneName(v) ?? undefined)) },
  { request: 'locale', option: 'locale', kept: 'record', fromRequest: (v?: string) => (v === undefined ? undefined : Intl.getCanonicalLocales(v)[0]) },
  { request: 'fail_on_http_error', option: 'failOnHttpError', kept: 'record' },
  // In one order, so the same outputs asked in another order share a cached result.
  { request: 'extract', option: 'extract', kept: 'record', fromRequest: (v?: string[]) => (v ? EXTRACT_KINDS.filter((kind) => v.includes(kind)) : undefined) },
  { request: 'evidence', option: 'evidence', kept: 'record' },
  { request: 'image_width', option: 'imageWidth', kept: 'record' },
  { request: 'image_height', option: 'imageHeight', kept: 'record' },
  { request: 'omit_background', option: 'omitBackground', kept: 'record' },
  // storage_path implies upload.
  { request: 'upload', option: 'upload', kept: 'record', fromRequest: (v: true | undefined, { input }: RequestContext) => v || input.storage_path !== undefined || undefined },
  { request: 'storage_path', option: 'storagePath', kept: 'record' },
  // Only the login's id: its credentials and session stay sealed with the login.
  { request: 'login', option: 'login', kept: 'record' },
  { request: 'headers', option: 'headers', kept: 'secret', fromRequest: (v?: Record<string, string>) => (v && Object.keys(v).length ? v : undefined) },
  { request: 'cookies', option: 'cookies', kept: 'secret', fromRequest: (v: RequestCookie[] | undefined, { host }: RequestContext) => v?.map((c) => captureCookie(c, host)) },
  { request: 'http_auth', option: 'httpAuth', kept: 'secret' },
] as const satisfies readonly CaptureOptionEntry[];

type Entry = (typeof CAPTURE_OPTIONS)[number];
/** The options sealed with a job's secrets (its `html` is kept with them, see JobSecrets). */
export type SecretOption = Extract<Entry, { kept: 'secret' }>['option'];
/** The large options only the capture reads (runOnly). */
export type RunOnlyOption = Extract<Entry, { runOnly: number }>['option'];

/**
 * The fields of POST /v1/screenshot that are no capture option: what the job is (its page,
 * devices, viewport, format, cache, webhook). `html` and `base_url` become the sealed `html`
 * of the options (screenshot-params.ts reads them with `url`, exactly one of the two).
 */
export const REQUEST_JOB_FIELDS = [
  'url',
  'html',
  'base_url',
  'devices',
  'callback_url',
  'full_page',
  'googlebot',
  'width',
  'height',
  'format',
  'quality',
  'cache_ttl',
] as const;

/** The run-only options in their turn to stay in a record. */
export const RUN_ONLY_OPTIONS: readonly Extract<Entry, { runOnly: number }>[] = CAPTURE_OPTIONS.filter(
  (e): e is Extract<Entry, { runOnly: number }> => 'runOnly' in e,
).sort((a, b) => a.runOnly - b.runOnly);

/** An option's entry by its name in the options. */
export const OPTION_ENTRY: ReadonlyMap<string, Entry> = new Map(CAPTURE_OPTIONS.map((e) => [e.option, e]));

const requestFields = ScreenshotRequest.properties as Record<string, { default?: unknown }>;

/**
 * A validated request's capture options as a job keeps them: `options` (shown in its record)
 * and `secrets` (sealed), each without the values left out or equal to their default.
 */
export function optionsOfRequest(input: ScreenshotRequest, host: string): { options: Record<string, unknown>; secrets: Record<string, unknown> } {
  const options: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = {};
  const fields = input as Record<string, unknown>;
  for (const entry of CAPTURE_OPTIONS) {
    if ('monitorOnly' in entry) continue;
    const given = fields[entry.request];
    const value = given === requestFields[entry.request]?.default ? undefined : given;
    const fromRequest = 'fromRequest' in entry ? (entry.fromRequest as (value: unknown, request: RequestContext) => unknown) : undefined;
    const kept = fromRequest ? fromRequest(value, { input, host }) : value;
    if (kept !== undefined) (entry.kept === 'secret' ? secrets : options)[entry.option] = kept;
  }
  return { options, secrets };
}

type RequestCookie = NonNullable<ScreenshotRequest['cookies']>[number];

/** A request's cookie as the engine sets it: on the page's host unless it names a domain. */
function captureCookie(c: RequestCookie, host: string): CaptureCookie {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain ?? host,
    ...(c.path ? { path: c.path } : {}),
    ...(c.secure === undefined ? {} : { secure: c.secure }),
    ...(c.http_only === undefined ? {} : { httpOnly: c.http_only }),
    ...(c.same_site ? { sameSite: c.same_site } : {}),
  };
}
