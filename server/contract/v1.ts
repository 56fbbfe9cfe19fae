import { type Static, Type } from 'typebox';

import { EXTRACT_KINDS } from '../capture/outputs/extract-bounds.js';
import { SETTLE_TIMEOUT_DEFAULT_MS, SETTLE_TIMEOUT_MAX_MS } from '../capture/pipeline/settle-report.js';
import { Count, Device, ErrorBody, IsoSeconds, JobId, jobVariants, Nullable, OutputFormat, Preset, RateLimitErrorBody } from './common.js';
import { MAX_STORAGE_PATH_LENGTH } from './storage.js';

// The v1 API's shapes (see common.ts for how they are used).

/** Longest `url` accepted. */
export const MAX_URL_LENGTH = 4096;
/** Longest `callback_url` accepted. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/** Longest `html`, in bytes of UTF-8. */
export const MAX_HTML_BYTES = 5 * 1024 * 1024;
/** Largest POST /v1/screenshot body, KB: room for `html` at its largest once escaped in JSON, with `styles` and `scripts`. */
export const MAX_BODY_KB = 11 * 1024;
/** Longest `styles` and `scripts`, in bytes of UTF-8. */
export const MAX_INJECTED_BYTES = 65_536;
/** Longest `cache_ttl`: 30 days, in seconds. */
export const MAX_CACHE_TTL_SECONDS = 30 * 86_400;
/** `cache_ttl` of a render link that names none: an hour. */
export const RENDER_CACHE_TTL_SECONDS = 3600;

/** Smallest and largest `image_width` / `image_height`, pixels. */
export const MIN_IMAGE_SIDE = 16;
export const MAX_IMAGE_SIDE = 3840;

/** Longest CSS selector accepted. */
const MAX_SELECTOR_LENGTH = 1024;

const Selector = (description: string) => Type.String({ minLength: 1, maxLength: MAX_SELECTOR_LENGTH, description });
const Flag = (description: string) => Type.Optional(Type.Boolean({ default: false, description }));

/** A header or cookie name: an HTTP token. */
const TOKEN_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
// What Chromium takes for a cookie; anything else would fail the job at run time (Network.setCookies
// refuses it) or drop the cookie without a word, instead of a 400 naming the field.
/** A cookie's domain: an ASCII host name or IPv4 address, optionally after a dot, or an IPv6 address in brackets. */
const COOKIE_DOMAIN_PATTERN = '^(\\.?[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*|\\[[0-9A-Fa-f:.]+\\])$';
/** A cookie's path: from /, without semicolons or control characters. */
const COOKIE_PATH_PATTERN = '^/[^;\\u0000-\\u001f\\u007f]*$';
/** A cookie's value: no white space, semicolons or control characters. */
const COOKIE_VALUE_PATTERN = '^[^;\\s\\u0000-\\u001f\\u007f]*$';

/** The options of a capture beyond device and format (capture-options.ts has them as the engine takes them). */
export const captureOptionFields = {
  wait_until: Type.Optional(
    Type.Enum(['settled', 'load', 'domcontentloaded', 'networkidle'], {
      description:
        'When the page counts as ready: settled (after load, fonts loaded, the network quiet but for connections open by design, and the picture no longer changing, ' +
        'within settle_timeout; the default for pictures), its load event (the default for PDF), DOMContentLoaded, or no request in flight for 500 ms',
    }),
  ),
  settle_timeout: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: SETTLE_TIMEOUT_MAX_MS,
      default: SETTLE_TIMEOUT_DEFAULT_MS,
      description: `wait_until settled: the longest wait for the page to settle after load, ms (at most half the capture time-out); past it the picture is taken anyway and the job warns not_settled`,
    }),
  ),
  delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, default: 0, description: 'Extra wait before the capture, ms' })),
  wait_for_selector: Type.Optional(
    Selector('Wait until an element matching this CSS selector is visible; the job fails with "Timed out waiting for selector <sel>"'),
  ),
  selector: Type.Optional(Selector('Capture only the first element matching this CSS selector; the job fails with "No element matches <sel>"')),
  clip: Type.Optional(
    Type.Object(
      {
        x: Type.Number({ minimum: 0, maximum: 100_000 }),
        y: Type.Number({ minimum: 0, maximum: 100_000 }),
        width: Type.Number({ minimum: 1, maximum: 16_384 }),
        height: Type.Number({ minimum: 1, maximum: 16_384 }),
      },
      { additionalProperties: false, description: 'Capture this rectangle of the page, CSS px from its top left corner' },
    ),
  ),
  scale: Type.Optional(Type.Number({ minimum: 1, maximum: 3, description: "Device scale factor, overriding the preset's (1 desktop, 2 tablet, 3 mobile)" })),
  hide_selectors: Type.Optional(
    Type.Array(Selector('A CSS selector'), { minItems: 1, maxItems: 100, description: 'Elements hidden (visibility: hidden) before the capture' }),
  ),
  styles: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_INJECTED_BYTES, description: 'CSS added to the page after load (at most 64 KB)' })),
  scripts: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_INJECTED_BYTES,
      description: 'JavaScript run in the page after load, before the capture, awaited when it returns a promise (at most 64 KB); the egress guard applies to all it does',
    }),
  ),
  click_selector: Type.Optional(Selector('Click the first element matching this CSS selector before the capture')),
  block_ads: Flag('Block requests to ad servers (lists shipped with the appliance)'),
  block_trackers: Flag('Block requests to trackers (lists shipped with the appliance)'),
  block_cookie_banners: Flag('Dismiss or hide consent dialogs'),
  dark_mode: Flag('prefers-color-scheme: dark'),
  reduced_motion: Flag('prefers-reduced-motion: reduce, and CSS animations and transitions frozen'),
  media_type: Type.Optional(Type.Enum(['screen', 'print'], { default: 'screen', description: 'CSS media type' })),
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: 8192 }), {
      maxProperties: 50,
      // A name that is no HTTP token is refused with a message naming it, not let through.
      propertyNames: { type: 'string', pattern: TOKEN_PATTERN, description: "an HTTP token: letters, digits and !#$%&'*+-.^_`|~" },
      description:
        "Extra request headers sent only to the page's own origin; hop-by-hop headers, Host, Cookie (use cookies) and Proxy-* are refused. Values are never shown back",
    }),
  ),
  cookies: Type.Optional(
    Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 256, pattern: TOKEN_PATTERN }),
          value: Type.String({ maxLength: 4096, pattern: COOKIE_VALUE_PATTERN, description: 'No white space, semicolons or control characters' }),
          domain: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 253,
              pattern: COOKIE_DOMAIN_PATTERN,
              description: "A host name (e.g. example.com or .example.com) or IP address, without scheme, port or path; defaults to the URL's host",
            }),
          ),
          path: Type.Optional(
            Type.String({ minLength: 1, maxLength: 1024, pattern: COOKIE_PATH_PATTERN, description: 'Starts with /, no semicolons or control characters; defaults to /' }),
          ),
          secure: Type.Optional(Type.Boolean()),
          http_only: Type.Optional(Type.Boolean()),
          same_site: Type.Optional(Type.Enum(['Strict', 'Lax', 'None'])),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50, description: 'Cookies set before navigation; values are never shown back' },
    ),
  ),
  user_agent: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1024, description: "Replaces the preset's user agent; refused together with googlebot: true" }),
  ),
  http_auth: Type.Optional(
    Type.Object(
      { username: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:]*$' }), password: Type.String({ maxLength: 256 }) },
      { additionalProperties: false, description: "HTTP Basic credentials, sent only to the page's own origin; never stored in clear or shown back" },
    ),
  ),
  login: Type.Optional(
    Type.String({
      pattern: '^login_[0-9a-f]{24}$',
      description: "A saved login of the account (POST /v1/logins): the page is captured signed in, the login's session applied (or made by signing in) first",
    }),
  ),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris' })),
  locale: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: 'BCP 47 tag, e.g. fr-FR: Accept-Language and navigator.language' })),
  fail_on_http_error: Flag('Fail the job with "The page answered <status>" when the main document answers 4xx or 5xx'),
  extract: Type.Optional(
    Type.Array(Type.Enum([...EXTRACT_KINDS]), {
      minItems: 1,
      maxItems: EXTRACT_KINDS.length,
      uniqueItems: true,
      description:
        'Outputs computed from the same render: markdown and text (the main content, as a reader view sees it), metadata (inline in the completed job), ' +
        'links (every link of the page); read with include_markdown, include_text and include_links. What cannot be extracted is an extract_failed warning, never a failed job. Not in render links',
    }),
  ),
  evidence: Flag(
    'Also record every HTTP exchange of the same render and package it, with the screenshot, the rendered HTML, its text and the job\'s metadata, ' +
      'as a signed WACZ web archive: the completed job\'s evidence_url. Headers, cookies and http_auth never enter it. Not in render links',
  ),
  image_width: Type.Optional(
    Type.Integer({
      minimum: MIN_IMAGE_SIDE,
      maximum: MAX_IMAGE_SIDE,
      description:
        'Resize the picture to this width in pixels, its height following the aspect ratio; with image_height, the picture is fitted inside that box, ' +
        'centred, and the rest left transparent (png, webp) or white (jpeg). Not for pdf',
    }),
  ),
  image_height: Type.Optional(
    Type.Integer({
      minimum: MIN_IMAGE_SIDE,
      maximum: MAX_IMAGE_SIDE,
      description: 'Resize the picture to this height in pixels, its width following the aspect ratio; see image_width for both. Not for pdf',
    }),
  ),
  omit_background: Flag('A transparent background where the page paints none (png and webp only)'),
};

export const ScreenshotRequest = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'http:// or https:// address to capture; exactly one of url and html' })),
    html: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_HTML_BYTES,
        description:
          "An HTML document to render instead of a url (at most 5 MB of UTF-8); exactly one of url and html. The job's url is about:html, " +
          'its final_url the address it was rendered at. Everything it loads goes through the egress guard. Not in render links',
      }),
    ),
    base_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_URL_LENGTH,
        description: "With html only: the http:// or https:// address the document is rendered at, so its relative addresses resolve against it (it is not fetched). Default: an address of no host's, where relative addresses load nothing",
      }),
    ),
    devices: Type.Optional(
      Type.Array(Type.Enum([...Device.enum, 'all']), {
        minItems: 1,
        maxItems: 16,
        default: ['desktop'],
        description: '`all` is every device; duplicates collapse; order is kept',
      }),
    ),
    callback_url: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: MAX_CALLBACK_URL_LENGTH, description: 'Webhook address notified when each job ends' })),
    ),
    full_page: Type.Optional(Type.Boolean({ default: false, description: 'Capture the whole page height (up to 16384 CSS px)' })),
    googlebot: Type.Optional(Type.Boolean({ default: false, description: "Load the page with Googlebot's user agent" })),
    width: Type.Optional(Type.Integer({ minimum: 320, maximum: 3840, description: 'Viewport width override, CSS px' })),
    height: Type.Optional(Type.Integer({ minimum: 240, maximum: 4320, description: 'Viewport height override, CSS px' })),
    format: Type.Optional({ ...OutputFormat, default: 'png' }),
    quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'jpeg and webp only; 80 when absent' })),
    cache_ttl: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_CACHE_TTL_SECONDS,
        description:
          `Seconds an identical earlier result of this account may be served instead of a new capture (\`cached: true\`, no call counted); ` +
          `0 (the default for POST) never; ${RENDER_CACHE_TTL_SECONDS} for a render link that names none; at most 30 days`,
      }),
    ),
    upload: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "Also upload the image to the account's storage destination (set by the admin), at `<prefix>/<job_id>-<device>.<ext>`; the completed job says where (`uploaded_to`). " +
          'A failed upload is an upload_failed warning, never a failed job. 400 when the account has no destination',
      }),
    ),
    storage_path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_STORAGE_PATH_LENGTH,
        description:
          'The object key to upload to, under the destination\'s prefix (implies upload): a template of {job_id}, {device}, {date} (YYYY-MM-DD, UTC) and {ext}; ' +
          'no other placeholder, no leading /, no . or .. segment. Give {job_id} or {device} when asking for several devices, or their images share one key',
      }),
    ),
    ...captureOptionFields,
  },
  { additionalProperties: false, description: 'Any field not listed is refused with 400 naming it.' },
);
export type ScreenshotRequest = Static<typeof ScreenshotRequest>;

export const ScreenshotCreated = Type.Object(
  {
    job_id: JobId,
    status: Type.Enum(['pending', 'processing', 'completed'], {
      description: 'pending, unless the first job was served from the cache (cache_ttl): then its status',
    }),
    cached: Type.Optional(Type.Boolean({ description: 'With cache_ttl only: whether the first job was served from the cache' })),
    devices: Type.Array(Device, { minItems: 1 }),
    full_page: Type.Boolean(),
    googlebot: Type.Boolean(),
    estimated_time_seconds: Type.Integer({ minimum: 1 }),
    status_url: Type.String({ format: 'uri' }),
    jobs: Type.Array(
      Type.Object(
        {
          job_id: JobId,
          device: Device,
          preset: Preset,
          status_url: Type.String({ format: 'uri' }),
          cached: Type.Optional(Type.Boolean({ description: 'With cache_ttl only: whether this job was served from the cache' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);
export type ScreenshotCreated = Static<typeof ScreenshotCreated>;

/** GET /v1/screenshot/{job_id} query. */
export const ScreenshotQuery = Type.Object(
  {
    include_source: Type.Optional(
      Type.Enum(['1', 'true', '0', 'false'], {
        description: 'When 1 or true, a completed job includes `page_source` (can be large); any other value is a 400',
      }),
    ),
    include_markdown: Type.Optional(Type.Enum(['1', 'true', '0', 'false'], { description: 'When 1 or true, a completed job includes `markdown` (when extracted)' })),
    include_text: Type.Optional(Type.Enum(['1', 'true', '0', 'false'], { description: 'When 1 or true, a completed job includes `text` (when extracted)' })),
    include_links: Type.Optional(Type.Enum(['1', 'true', '0', 'false'], { description: 'When 1 or true, a completed job includes `links` (when extracted)' })),
  },
  // Other parameters are ignored, as caches and tracing tools add their own.
  { additionalProperties: true },
);

const jobs = jobVariants({});
export const JobPending = jobs.pending;
export const JobProcessing = jobs.processing;
export const JobCompleted = jobs.completed;
export const JobFailed = jobs.failed;
/** The status resource, one variant per status. */
export type ScreenshotJob = Static<typeof JobPending> | Static<typeof JobProcessing> | Static<typeof JobCompleted> | Static<typeof JobFailed>;

export const Usage = Type.Object(
  {
    calls_today: Count('Calls made today (UTC)'),
    calls_this_month: Count('Calls made this month (UTC)'),
    daily_limit: Count('Daily call limit'),
    monthly_limit: Count('Monthly call limit (enforced)'),
    reset_at: IsoSeconds,
  },
  { additionalProperties: false },
);
export type Usage = Static<typeof Usage>;

/** The image file name behind a screenshot_url. */
export const FILE_NAME_PATTERN = '^[A-Za-z0-9_-]{24}\\.(png|jpg|webp|pdf)$';

/** The schemas the v1 document names under components/schemas (request bodies are inline). */
export const V1_SCHEMAS = {
  Error: ErrorBody,
  RateLimitError: RateLimitErrorBody,
  ScreenshotCreated,
  JobPending,
  JobProcessing,
  JobCompleted,
  JobFailed,
  Usage,
};
