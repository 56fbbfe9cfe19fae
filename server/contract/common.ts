import { type Static, type TSchema, Type } from 'typebox';

import { WARNING_CODES } from '../capture/outputs/capture-warnings.js';
import { MAX_EXTRACT_STRING, MAX_LINKS, MAX_METADATA_ITEMS } from '../capture/outputs/extract-bounds.js';
import { DEVICE_NAMES } from '../capture/presets.js';

// Shapes both APIs share. Every request and response shape of v1 and the admin API is
// declared once, as a TypeBox schema: ajv validates requests against it (validate.ts), the
// OpenAPI documents are assembled from it, and the TypeScript types of handlers and of the
// control panel are derived from it with Static<>.

/** `YYYY-MM-DD HH:MM:SS` in UTC, the v1 specification's timestamp pattern. */
export const SpecTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$',
  description: 'UTC, YYYY-MM-DD HH:MM:SS',
  examples: ['2026-11-20 14:03:11'],
});

/** `YYYY-MM-DDTHH:MM:SSZ`, ISO 8601 in UTC without fractions. */
export const IsoSeconds = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$',
  description: 'ISO 8601 in UTC, YYYY-MM-DDTHH:MM:SSZ',
  examples: ['2026-11-21T00:00:00Z'],
});

export const JobId = Type.String({ pattern: '^job_[0-9a-f]{24}$', examples: ['job_5f0c3a1e9b7d2c4f6a8e0b1d'] });

export const Device = Type.Enum([...DEVICE_NAMES]);
export const Preset = Type.Enum(['desktop', 'tablet_landscape', 'mobile']);
export const JobStatus = Type.Enum(['pending', 'processing', 'completed', 'failed']);
export type JobStatus = Static<typeof JobStatus>;
export const ImageFormat = Type.Enum(['png', 'jpeg', 'webp']);
/** What a capture produces: an image, or a PDF of the page (A4; `full_page` does not apply). */
export const OutputFormat = Type.Enum(['png', 'jpeg', 'webp', 'pdf'], { description: 'png, jpeg, webp, or pdf (A4 pages of the document)' });

/** A non-negative integer counter. */
export const Count = (description: string) => Type.Integer({ minimum: 0, description });

/** `T` or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * `{error, message}`, the body of every error. `retry_after` is present on 429 only; the
 * 429 variant requires it.
 */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Short error title, e.g. "Bad request", "IP not allowed"' }),
    message: Type.String({ description: 'Human-readable explanation; for 400 it names the offending field' }),
    retry_after: Type.Optional(Type.Integer({ minimum: 1, description: 'Seconds to wait before retrying (429 only)' })),
  },
  { additionalProperties: false },
);

export const RateLimitErrorBody = Type.Object(
  {
    error: Type.Literal('Rate limit exceeded'),
    message: Type.String({ description: 'Names the limit that was reached' }),
    retry_after: Type.Integer({ minimum: 1, description: 'Seconds to wait; the Retry-After header says the same' }),
  },
  { additionalProperties: false },
);

/** Fields of a job every status carries, as the status endpoint returns them. */
const jobBase = {
  job_id: JobId,
  url: Type.String({ description: 'The URL being captured, normalised; about:html for a document given as html (final_url says where it was rendered)' }),
  preset: Preset,
  full_page: Type.Boolean(),
  googlebot: Type.Boolean(),
  created_at: SpecTime,
};

/** One thing a completed capture's picture may get wrong; the code is for programs, the message for people. */
export const CaptureWarning = Type.Object(
  {
    code: Type.Enum([...WARNING_CODES], {
      description:
        'blank: the picture is one colour; images_not_loaded: images in the picture failed or had not loaded (counted); ' +
        'fonts_not_loaded: web fonts failed or had not loaded (named); placeholders: loading states were shown (spinners, skeletons, "Loading…", charts without data; counted, the first named); ' +
        'overlay: a fixed element (a dialog, a banner) covers more than a third of the viewport over the page, or most of a short page; ' +
        'login_page: the page is a sign-in form (named); ' +
        'truncated: the page was cut at the height a capture may have; http_error: the page answered 4xx or 5xx and was captured; ' +
        'console_errors: the page reported errors to its console (counted); network_busy: requests were still in flight at capture, ' +
        'or a blank first picture was taken again once they ended; not_settled: the page had not settled at the settle cap (what held, where the picture changed, for how long); extract_failed: an output asked for with `extract` could not be made (named); ' +
        "upload_failed: the image could not be uploaded to the account's storage destination (why; the image is still served at screenshot_url)",
    }),
    message: Type.String({ description: 'What was found, with counts, names or sizes' }),
    detail: Type.Optional(
      Type.Object(
        {
          images: Type.Integer({ minimum: 0, description: 'Images in the picture' }),
          missing: Type.Integer({ minimum: 0, description: 'Of them, those that failed or had not loaded' }),
          missing_share: Type.Number({ minimum: 0, maximum: 1, description: "The share of the images' area in the picture the missing ones take" }),
        },
        { additionalProperties: false, description: 'What was measured, for programs: of images_not_loaded only (absent on the others)' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CaptureWarning = Static<typeof CaptureWarning>;

const Str = (description?: string) => Type.String({ maxLength: MAX_EXTRACT_STRING, ...(description ? { description } : {}) });
const StrMap = (description: string) => Type.Record(Type.String(), Str(), { maxProperties: MAX_METADATA_ITEMS, description });

/** What `extract: ["metadata"]` finds in the page ('' where it declares nothing); strings at most 2048 characters, lists and maps at most 50 entries. */
export const PageMetadata = Type.Object(
  {
    title: Str(),
    description: Str('<meta name="description">'),
    language: Str('<html lang>'),
    canonical_url: Str('<link rel="canonical">, absolute'),
    open_graph: StrMap('og:* properties without the prefix (image, url… absolute)'),
    twitter: StrMap('twitter:* names without the prefix'),
    favicon: Str('The first rel="icon", else /favicon.ico of the page, absolute'),
    icons: Type.Array(Type.Object({ url: Str(), rel: Str(), sizes: Str(), type: Str() }, { additionalProperties: false }), { maxItems: MAX_METADATA_ITEMS }),
    feeds: Type.Array(Type.Object({ url: Str(), title: Str(), type: Str() }, { additionalProperties: false }), {
      maxItems: MAX_METADATA_ITEMS,
      description: 'RSS, Atom and JSON feeds the page links to (rel="alternate")',
    }),
    published_time: Str('article:published_time, else JSON-LD datePublished'),
    modified_time: Str('article:modified_time or og:updated_time, else JSON-LD dateModified'),
  },
  { additionalProperties: false, description: 'With extract: ["metadata"]: what the page declares of itself' },
);

/** Where a completed job's image was uploaded (`upload` or `storage_path`). */
export const UploadedTo = Type.Object(
  {
    bucket: Type.String(),
    key: Type.String({ description: 'The object key, prefix included' }),
  },
  {
    additionalProperties: false,
    description:
      "Where the image was uploaded in the account's storage destination (upload or storage_path); absent when not asked for, or when the upload failed (an upload_failed warning says why)",
  },
);
export type UploadedTo = Static<typeof UploadedTo>;

const completedFields = {
  screenshot_url: Type.String({
    format: 'uri',
    description: 'Unguessable image address, served without the API key until the retention period ends',
  }),
  evidence_url: Type.Optional(
    Type.String({
      format: 'uri',
      description: 'With evidence: the signed WACZ bundle of the capture (docs/evidence.md), served like screenshot_url without the API key until the retention period ends',
    }),
  ),
  completed_at: SpecTime,
  has_page_source: Type.Boolean(),
  page_source: Type.Optional(Type.String({ description: 'The page HTML; only with include_source=1 and when stored' })),
  truncated: Type.Optional(
    Type.Literal(true, {
      description: "Present when the image was cut: a full page taller than the height cap, or a page, clip or selector's element past 150 million device pixels or the longest side an image may have (262144 device pixels; WebP 16383)",
    }),
  ),
  expired: Type.Optional(Type.Boolean({ description: 'True once the retention period has removed the image' })),
  http_status: Type.Optional(
    Nullable(Type.Integer({ minimum: 100, maximum: 599, description: "The main document's HTTP status; null when it did not come over HTTP" })),
  ),
  final_url: Type.Optional(Type.String({ description: 'The address of the page captured, after redirects' })),
  page_title: Type.Optional(Type.String({ description: "The page's title ('' when it has none)" })),
  has_markdown: Type.Optional(Type.Boolean({ description: 'With extract: whether the Markdown was extracted and is stored (include_markdown=1)' })),
  has_text: Type.Optional(Type.Boolean({ description: 'With extract: whether the plain text was extracted and is stored (include_text=1)' })),
  has_links: Type.Optional(Type.Boolean({ description: 'With extract: whether the links were extracted and are stored (include_links=1)' })),
  links_truncated: Type.Optional(Type.Literal(true, { description: `Present when the page had more links than the ${MAX_LINKS} kept` })),
  metadata: Type.Optional(PageMetadata),
  markdown: Type.Optional(Type.String({ description: 'The main content as GitHub-flavoured Markdown; only with include_markdown=1 and when stored' })),
  text: Type.Optional(Type.String({ description: 'The main content as plain text; only with include_text=1 and when stored' })),
  links: Type.Optional(
    Type.Array(Type.Object({ url: Type.String(), text: Type.String() }, { additionalProperties: false }), {
      description: 'Every http(s) link of the page, absolute, de-duplicated, in document order, with its text; only with include_links=1 and when stored',
    }),
  ),
  warnings: Type.Array(CaptureWarning, {
    description: 'What may be wrong with the picture, in a fixed order of codes; empty when all is well. A warning never fails the job',
  }),
  uploaded_to: Type.Optional(UploadedTo),
};

/**
 * One schema per job status, with the specification's presence rules: screenshot_url,
 * completed_at and has_page_source only when completed, error only when failed,
 * page_source only when asked for. `extra` adds fields (the admin view's).
 */
export function jobVariants<P extends Record<string, TSchema>>(extra: P) {
  return {
    pending: Type.Object(
      { ...jobBase, status: Type.Literal('pending'), progress: Type.Literal(0), ...extra },
      { additionalProperties: false },
    ),
    processing: Type.Object(
      {
        ...jobBase,
        status: Type.Literal('processing'),
        progress: Type.Integer({ minimum: 0, maximum: 99, description: '10 started, 40 page loaded, 70 captured, 90 stored' }),
        ...extra,
      },
      { additionalProperties: false },
    ),
    completed: Type.Object(
      { ...jobBase, status: Type.Literal('completed'), progress: Type.Literal(100), ...completedFields, ...extra },
      { additionalProperties: false },
    ),
    failed: Type.Object(
      { ...jobBase, status: Type.Literal('failed'), progress: Type.Literal(0), error: Type.String({ description: 'Why the capture failed' }), ...extra },
      { additionalProperties: false },
    ),
  };
}

export const QueueStats = Type.Object(
  {
    pending: Count('Jobs waiting'),
    running: Count('Jobs being captured'),
    concurrency: Type.Integer({ minimum: 1 }),
    limit: Type.Integer({ minimum: 1, description: 'Jobs waiting or running before POST /v1/screenshot answers 503' }),
    paused: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type QueueStats = Static<typeof QueueStats>;
