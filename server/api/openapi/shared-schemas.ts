import { DEVICE_NAMES } from '../../capture/presets.js';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** `YYYY-MM-DD HH:MM:SS` in UTC, the v1 specification's timestamp pattern. */
export const SPEC_TIME: JsonSchema = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$',
  description: 'UTC, YYYY-MM-DD HH:MM:SS',
  examples: ['2026-11-20 14:03:11'],
};

/** `YYYY-MM-DDTHH:MM:SSZ`, ISO 8601 in UTC without fractions. */
export const ISO_SECONDS: JsonSchema = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$',
  description: 'ISO 8601 in UTC, YYYY-MM-DDTHH:MM:SSZ',
  examples: ['2026-11-21T00:00:00Z'],
};

export const JOB_ID: JsonSchema = { type: 'string', pattern: '^job_[0-9a-f]{24}$', examples: ['job_5f0c3a1e9b7d2c4f6a8e0b1d'] };

export const DEVICE: JsonSchema = { type: 'string', enum: [...DEVICE_NAMES] };
export const PRESET: JsonSchema = { type: 'string', enum: ['desktop', 'tablet_landscape', 'mobile'] };
export const JOB_STATUS: JsonSchema = { type: 'string', enum: ['pending', 'processing', 'completed', 'failed'] };

/** A non-negative integer counter. */
export const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });

/**
 * `{error, message}`, the body of every error. `retry_after` is present on 429 only; the
 * 429 variant in each document requires it.
 */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  additionalProperties: false,
  properties: {
    error: { type: 'string', description: 'Short error title, e.g. "Bad request", "IP not allowed"' },
    message: { type: 'string', description: 'Human-readable explanation; for 400 it names the offending field' },
    retry_after: { type: 'integer', minimum: 1, description: 'Seconds to wait before retrying (429 only)' },
  },
};

export const RATE_LIMIT_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error', 'message', 'retry_after'],
  additionalProperties: false,
  properties: {
    error: { const: 'Rate limit exceeded' },
    message: { type: 'string', description: 'Names the limit that was reached' },
    retry_after: { type: 'integer', minimum: 1, description: 'Seconds to wait; the Retry-After header says the same' },
  },
};

/** Fields of a job every status carries, as the status endpoint returns them. */
const JOB_BASE: Record<string, JsonSchema> = {
  job_id: JOB_ID,
  progress: { type: 'integer', minimum: 0, maximum: 100 },
  url: { type: 'string', description: 'The URL being captured, normalised' },
  preset: PRESET,
  full_page: { type: 'boolean' },
  googlebot: { type: 'boolean' },
  created_at: SPEC_TIME,
};

/**
 * One schema per job status, with the specification's presence rules: screenshot_url,
 * completed_at and has_page_source only when completed, error only when failed,
 * page_source only when asked for. `extra` adds fields (the admin view's).
 */
export function jobVariants(extra: { properties: Record<string, JsonSchema>; required: string[] } = { properties: {}, required: [] }) {
  const variant = (status: string, progress: JsonSchema, properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
    type: 'object',
    additionalProperties: false,
    required: ['job_id', 'status', 'progress', 'url', 'preset', 'full_page', 'googlebot', 'created_at', ...required, ...extra.required],
    properties: { ...JOB_BASE, status: { const: status }, progress, ...properties, ...extra.properties },
  });
  return {
    pending: variant('pending', { const: 0 }, {}, []),
    processing: variant('processing', { type: 'integer', minimum: 0, maximum: 99, description: '10 started, 40 page loaded, 70 captured, 90 stored' }, {}, []),
    completed: variant(
      'completed',
      { const: 100 },
      {
        screenshot_url: {
          type: 'string',
          format: 'uri',
          description: 'Unguessable image address, served without the API key until the retention period ends',
        },
        completed_at: SPEC_TIME,
        has_page_source: { type: 'boolean' },
        page_source: { type: 'string', description: 'The page HTML; only with include_source=1 and when stored' },
        truncated: { const: true, description: 'Present when a full page was taller than the height cap and was cut' },
        expired: { type: 'boolean', description: 'True once the retention period has removed the image' },
      },
      ['screenshot_url', 'completed_at', 'has_page_source'],
    ),
    failed: variant('failed', { const: 0 }, { error: { type: 'string', description: 'Why the capture failed' } }, ['error']),
  };
}

/** A `oneOf` over the status variants, discriminated by `status`. */
export function jobOneOf(prefix: string): JsonSchema {
  const names = ['pending', 'processing', 'completed', 'failed'];
  const ref = (s: string) => `#/components/schemas/${prefix}${s[0].toUpperCase()}${s.slice(1)}`;
  return {
    oneOf: names.map((s) => ({ $ref: ref(s) })),
    discriminator: { propertyName: 'status', mapping: Object.fromEntries(names.map((s) => [s, ref(s)])) },
  };
}

export const QUEUE_STATS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['pending', 'running', 'concurrency', 'limit', 'paused'],
  properties: {
    pending: count('Jobs waiting'),
    running: count('Jobs being captured'),
    concurrency: { type: 'integer', minimum: 1 },
    limit: { type: 'integer', minimum: 1, description: 'Jobs waiting or running before POST /v1/screenshot answers 503' },
    paused: { type: 'boolean' },
  },
};
