import { type Static, Type } from 'typebox';

import { Count, IsoSeconds, JobId, JobStatus } from './common.js';
import { MAX_CALLBACK_URL_LENGTH } from './v1.js';

// The shapes of POST/GET/DELETE /v1/batches. An item is a POST /v1/screenshot body over the
// batch's shared options, and is validated as one (ScreenshotRequest), so only the batch's own
// fields are declared here.

/** Most items one batch may hold. */
export const MAX_BATCH_ITEMS = 1000;
/** Jobs a page of GET /v1/batches/{id} lists by default, and at most. */
export const BATCH_PAGE_SIZE = 100;
export const MAX_BATCH_PAGE_SIZE = 1000;

export const BatchId = Type.String({ pattern: '^batch_[0-9a-f]{24}$', examples: ['batch_5f0c3a1e9b7d2c4f6a8e0b1d'] });

/** Longest `include` or `exclude` pattern: with URLs no longer than MAX_MATCHED_URL_LENGTH, a bound on any pattern's run. */
export const MAX_PATTERN_LENGTH = 256;
/** Longest sitemap URL `include` and `exclude` are matched against; longer ones are left out of the batch. */
export const MAX_MATCHED_URL_LENGTH = 2048;

const Pattern = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PATTERN_LENGTH, description }));

/** POST /v1/batches: the batch's own fields; any other field is a shared option of its items. */
export const BatchRequest = Type.Object(
  {
    items: Type.Optional(
      Type.Array(Type.Object({}, { additionalProperties: true }), {
        minItems: 1,
        maxItems: MAX_BATCH_ITEMS,
        description: `1 to ${MAX_BATCH_ITEMS} captures, each a url (or html) with any option of POST /v1/screenshot overriding the shared ones; one device each`,
      }),
    ),
    sitemap: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_CALLBACK_URL_LENGTH, description: 'Instead of items: a sitemap (or sitemap index, plain or gzip) whose pages to capture' }),
    ),
    include: Pattern('With sitemap: only the URLs this regular expression matches'),
    exclude: Pattern('With sitemap: leave out the URLs this regular expression matches'),
    callback_url: Type.Optional(
      Type.String({ maxLength: MAX_CALLBACK_URL_LENGTH, description: 'Receives batch.completed when the batch ends; an item gets its own webhook only with its own callback_url' }),
    ),
  },
  { additionalProperties: true },
);
export type BatchRequest = Static<typeof BatchRequest>;

export const BatchStatus = Type.Enum(['pending', 'running', 'completed', 'cancelled'], {
  description: 'pending until one of its jobs starts; completed once every item has ended; cancelled by DELETE',
});

/** 201 answer of POST /v1/batches. */
export const BatchCreated = Type.Object(
  {
    batch_id: BatchId,
    status: BatchStatus,
    total: Type.Integer({ minimum: 1 }),
    status_url: Type.String({ format: 'uri' }),
  },
  { additionalProperties: false },
);
export type BatchCreated = Static<typeof BatchCreated>;

/** GET /v1/batches/{id} query. */
export const BatchQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page of the jobs list, from 1' })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BATCH_PAGE_SIZE, default: BATCH_PAGE_SIZE, description: 'Jobs per page' })),
  },
  { additionalProperties: true },
);

/** GET /v1/batches/{id} (and DELETE's answer). */
export const BatchResource = Type.Object(
  {
    batch_id: BatchId,
    status: BatchStatus,
    total: Type.Integer({ minimum: 1 }),
    counts: Type.Object(
      {
        pending: Count('Items not started: waiting in the queue, or not fed to it yet'),
        processing: Count('Items being captured'),
        completed: Count('Items captured'),
        failed: Count('Items whose capture failed'),
      },
      { additionalProperties: false },
    ),
    progress: Type.Number({ minimum: 0, maximum: 1, description: 'Share of the items ended (completed or failed)' }),
    estimated_seconds_left: Type.Integer({ minimum: 0, description: 'Until the last item should have ended, from the fair order; 0 once ended' }),
    jobs: Type.Array(
      Type.Object(
        {
          index: Type.Integer({ minimum: 0, description: "The item's place in the request, from 0" }),
          job_id: JobId,
          url: Type.String(),
          status: JobStatus,
        },
        { additionalProperties: false },
      ),
      { description: 'The jobs made so far, by index, one page of them; an item not yet fed to the queue has none' },
    ),
    next_page: Type.Optional(Type.String({ format: 'uri', description: 'The next page of jobs, when there is one' })),
    archive_url: Type.String({ format: 'uri', description: 'A ZIP of the completed images with manifest.json and manifest.csv' }),
  },
  { additionalProperties: false },
);
export type BatchResource = Static<typeof BatchResource>;

/** What `batch.completed` carries (batchEndedEvent). */
export const BatchEventData = Type.Object(
  {
    batch_id: BatchId,
    status: Type.Enum(['completed', 'cancelled']),
    total: Type.Integer({ minimum: 1 }),
    counts: Type.Object(
      {
        completed: Count('Items captured'),
        failed: Count('Items whose capture failed'),
        not_ended: Count('Items not ended when the batch ended: for a cancelled batch, those never run and the few still in the queue'),
      },
      { additionalProperties: false },
    ),
    status_url: Type.String({ format: 'uri' }),
    archive_url: Type.String({ format: 'uri' }),
  },
  { additionalProperties: false },
);

export const BATCH_SCHEMAS = { BatchCreated, BatchResource, BatchEventData };

/** A batch as the control panel lists it (GET /admin/api/batches). */
export const AdminBatch = Type.Object(
  {
    batch_id: BatchId,
    account_id: Type.String(),
    status: Type.Enum(['running', 'completed', 'cancelled']),
    total: Type.Integer({ minimum: 1 }),
    completed: Count('Items captured'),
    failed: Count('Items whose capture failed'),
    progress: Type.Number({ minimum: 0, maximum: 1, description: 'Share of the items ended' }),
    created_at: IsoSeconds,
    archive_url: Type.String({ description: 'The archive through the admin API (/admin/api/batches/{id}/archive)' }),
  },
  { additionalProperties: false },
);
export type AdminBatch = Static<typeof AdminBatch>;

export const AdminBatchList = Type.Object({ batches: Type.Array(AdminBatch) }, { additionalProperties: false });

/** Batches GET /admin/api/batches lists by default, and at most. */
export const ADMIN_BATCH_PAGE = 20;
export const MAX_ADMIN_BATCH_PAGE = 200;

export const AdminBatchesQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ADMIN_BATCH_PAGE, default: ADMIN_BATCH_PAGE, description: 'How many, newest first' })) },
  { additionalProperties: true },
);
