import { type Static, Type } from 'typebox';

import { Count, Device, ErrorBody, ImageFormat, IsoSeconds, JobId, jobVariants,Nullable, Preset, RateLimitErrorBody } from './common.js';

// The v1 API's shapes (see common.ts for how they are used).

/** Longest `url` accepted. */
export const MAX_URL_LENGTH = 4096;
/** Longest `callback_url` accepted. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

export const ScreenshotRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'http:// or https:// address to capture' }),
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
    format: Type.Optional({ ...ImageFormat, default: 'png' }),
    quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'jpeg and webp only; 80 when absent' })),
  },
  { additionalProperties: false, description: 'Any field not listed is refused with 400 naming it.' },
);
export type ScreenshotRequest = Static<typeof ScreenshotRequest>;

export const ScreenshotCreated = Type.Object(
  {
    job_id: JobId,
    status: Type.Literal('pending'),
    devices: Type.Array(Device, { minItems: 1 }),
    full_page: Type.Boolean(),
    googlebot: Type.Boolean(),
    estimated_time_seconds: Type.Integer({ minimum: 1 }),
    status_url: Type.String({ format: 'uri' }),
    jobs: Type.Array(
      Type.Object(
        { job_id: JobId, device: Device, preset: Preset, status_url: Type.String({ format: 'uri' }) },
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
export const FILE_NAME_PATTERN = '^[A-Za-z0-9_-]{24}\\.(png|jpg|webp)$';

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
