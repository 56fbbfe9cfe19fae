import { Type } from 'typebox';

import { BATCH_SCHEMAS } from '../../contract/batches.js';
import { LOGIN_SCHEMAS } from '../../contract/logins.js';
import { MONITOR_SCHEMAS } from '../../contract/monitors.js';
import { FILE_NAME_PATTERN, JobCompleted, JobFailed, MAX_BODY_KB, ScreenshotQuery, ScreenshotRequest, V1_SCHEMAS } from '../../contract/v1.js';
import { VERIFY_MAX_BYTES } from '../evidence-routes.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../idempotency-key.js';
import { MAX_RENDER_TIMEOUT_SECONDS, SECRET_OPTIONS } from '../render-link.js';
import { componentSchemas, jobOneOf, type JsonSchema,plain, queryParameters } from './components.js';
import { BatchEvent, batchPaths, batchWebhooks } from './v1-batches.js';
import { loginPaths } from './v1-logins.js';
import { MonitorEvent, monitorPaths, monitorWebhooks, type V1DocumentParts } from './v1-monitors.js';

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** The X-RateLimit-* headers every response to an identified key carries. */
const RATE_HEADERS = {
  'X-RateLimit-Limit': ref('headers', 'RateLimitLimit'),
  'X-RateLimit-Remaining': ref('headers', 'RateLimitRemaining'),
  'X-RateLimit-Reset': ref('headers', 'RateLimitReset'),
};

/** An error answer to an identified key: `{error, message}` plus the rate-limit headers. */
const keyedError = (description: string) => ({ description, headers: RATE_HEADERS, content: json(ref('schemas', 'Error')) });

/** Errors any authenticated v1 endpoint can answer. */
const AUTH_ERRORS = {
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '429': ref('responses', 'RateLimited'),
  '500': ref('responses', 'InternalError'),
};

/** What the monitors' part of the document takes from this one. */
const parts: V1DocumentParts = { json, ref, rateHeaders: RATE_HEADERS, authErrors: AUTH_ERRORS, keyedError };

/**
 * GET /v1/render's parameters: every field of POST /v1/screenshot but the secret ones as query
 * text (objects as JSON, devices comma-separated), then the link's own.
 */
function renderParameters(): JsonSchema[] {
  const options = Object.entries(ScreenshotRequest.properties).filter(([name]) => !(SECRET_OPTIONS as readonly string[]).includes(name)).map(([name, property]) => {
    const { description, ...schema } = plain(property) as { description?: string; type?: string; items?: { type?: string } };
    const asText = schema.type === 'object' || (schema.type === 'array' && schema.items?.type === 'object') || name === 'devices';
    const how = name === 'devices' ? 'Comma-separated; one device' : asText ? 'As JSON' : undefined;
    return {
      name,
      in: 'query',
      required: name === 'url',
      description: [how, description].filter(Boolean).join('. '),
      schema: asText ? { type: 'string' } : schema,
    };
  });
  return [
    ...options,
    { name: 'key_id', in: 'query', required: true, description: "The key's id (admin API)", schema: { type: 'string' } },
    {
      name: 'signature',
      in: 'query',
      required: true,
      description:
        'Lowercase hex HMAC-SHA256, keyed by the key\'s signing secret, of every other parameter written ' +
        '`encodeURIComponent(name)=encodeURIComponent(value)`, sorted by that name, joined with `&`',
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
    { name: 'expires', in: 'query', required: false, description: 'Unix time (seconds) after which the link answers 403', schema: { type: 'string', pattern: '^\\d{1,12}$' } },
    {
      name: 'render_timeout',
      in: 'query',
      required: false,
      description: `Seconds to wait for the capture before answering 202 (default and most ${MAX_RENDER_TIMEOUT_SECONDS})`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_RENDER_TIMEOUT_SECONDS },
    },
  ];
}

/** What a callback_url receives when a job ends. */
const WebhookEvent = Type.Object(
  {
    type: Type.Enum(['screenshot.completed', 'screenshot.failed']),
    timestamp: Type.String({ format: 'date-time', description: 'When the job ended, ISO 8601 in UTC' }),
    data: Type.Union([JobCompleted, JobFailed], { description: 'The job, without page_source' }),
  },
  { additionalProperties: false },
);

/**
 * The OpenAPI 3.1 document of the v1 API, served at GET /v1/openapi.json. `baseUrl` is the
 * origin clients reach the service at (the configured public base URL or the request's).
 */
export function v1OpenApiDocument(baseUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Screenshot Appliance API',
      version: '1.0.0',
      summary: 'Asynchronous screenshots of web pages in a real browser',
      description:
        'Create a screenshot job for a URL, poll its status (or receive a signed webhook), then fetch the image from ' +
        '`screenshot_url`. Every request carries `X-API-Key`; every response to an identified key carries the ' +
        '`X-RateLimit-*` headers. Errors are `{error, message}`. A capture that fails is not an HTTP error: the job ends ' +
        '`failed` with its `error`. Checks run in this order: key (401), IP whitelist (403), e-mail verified (403), plan ' +
        '(403), requests per second (429), body (400), daily and monthly limits (429).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: `${baseUrl}/v1` }],
    security: [{ ApiKey: [] }],
    tags: [
      { name: 'screenshots', description: 'Screenshot jobs and their images' },
      { name: 'evidence', description: 'Signed WACZ bundles of captures asked with evidence: true, their signing key and their check' },
      { name: 'usage', description: 'Calls counted against the limits' },
      { name: 'mcp', description: 'The Model Context Protocol endpoint for AI agents' },
      { name: 'monitors', description: 'Scheduled captures compared with a baseline, with a diff picture and a webhook on change' },
      { name: 'logins', description: 'Saved logins a capture signs in with' },
      { name: 'batches', description: 'Many captures in one request: progress, a streamed ZIP, one webhook' },
      { name: 'meta', description: 'This document' },
    ],
    paths: {
      ...monitorPaths(parts),
      ...loginPaths(parts),
      ...batchPaths(parts),
      '/screenshot': {
        post: {
          operationId: 'createScreenshot',
          tags: ['screenshots'],
          summary: 'Create a screenshot job (one per device)',
          description:
            'Queues one job per device; the response names the first one in `job_id`/`status_url` and all of them in ' +
            '`jobs`. Each job counts as one call against the daily and monthly limits; a request that would pass a limit is ' +
            'refused whole.',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description:
                `Makes the request safe to retry: 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, bare or as a quoted string. ` +
                'A retry with the same key and body within 24 hours gets the first answer again (same jobs, no call counted); ' +
                'keys are per account. A request that made no job keeps nothing',
              schema: { type: 'string', minLength: 1 },
            },
          ],
          requestBody: { required: true, content: json(plain(ScreenshotRequest)) },
          responses: {
            '201': {
              description: 'The jobs were queued (or, with an Idempotency-Key seen before, the first answer again)',
              headers: {
                ...RATE_HEADERS,
                'Idempotent-Replayed': { description: '`true` when this is the kept answer of an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
              },
              content: json(ref('schemas', 'ScreenshotCreated')),
            },
            '400': keyedError('Invalid parameters, body or Idempotency-Key; the message names the field'),
            ...AUTH_ERRORS,
            '409': {
              description: 'A request with this Idempotency-Key is still being answered',
              headers: { ...RATE_HEADERS, 'Retry-After': ref('headers', 'RetryAfter') },
              content: json(ref('schemas', 'Error')),
            },
            '413': keyedError(`The request body is larger than ${MAX_BODY_KB} KB`),
            '422': keyedError('This Idempotency-Key was used in the last 24 hours with another body'),
            '503': {
              description: 'The capture queue is full, the account already has its share of it waiting or running, or the service is shutting down',
              headers: { ...RATE_HEADERS, 'Retry-After': ref('headers', 'RetryAfter') },
              content: json(ref('schemas', 'Error')),
            },
            '507': keyedError('The disk of the service is full; nothing was stored and the call was not counted'),
          },
        },
      },
      '/mcp': {
        post: {
          operationId: 'mcp',
          tags: ['mcp'],
          summary: 'Model Context Protocol (Streamable HTTP, stateless): tools take_screenshot and read_page',
          description:
            'JSON-RPC 2.0 messages of the Model Context Protocol, for an MCP client; no session id. Each tool call creates an ' +
            'ordinary job, counted as one call against the daily and monthly limits. A failed job or a refused call (a limit, a ' +
            'field) is a tool result with `isError: true`, not an HTTP error. GET and DELETE are 405.',
          requestBody: { required: true, content: json({ type: 'object', description: 'A JSON-RPC 2.0 request, notification or response' }) },
          responses: {
            '200': {
              description: 'The JSON-RPC response, as JSON or as an event stream (with progress notifications while a tool runs)',
              content: {
                'application/json': { schema: { type: 'object' } },
                'text/event-stream': { schema: { type: 'string' } },
              },
            },
            '202': { description: 'A notification or response was accepted' },
            '400': { description: 'Not a JSON-RPC message', content: json({ type: 'object' }) },
            ...AUTH_ERRORS,
            '406': { description: 'The Accept header does not take both application/json and text/event-stream', content: json({ type: 'object' }) },
          },
        },
      },
      '/render': {
        get: {
          operationId: 'renderScreenshot',
          tags: ['screenshots'],
          summary: 'A signed render link: the picture itself, for an <img>',
          description:
            'Needs no X-API-Key: the link names its key by `key_id` and is signed with the key\'s signing secret, so it can sit ' +
            'in a public page and nobody can change its parameters. Then the checks of POST /v1/screenshot apply. A result ' +
            'of this account for the same URL and options within `cache_ttl` (default 3600 s here) is served without a new ' +
            'capture and without counting a call (`X-Cache: hit`); identical requests arriving together capture once.',
          security: [],
          parameters: [...renderParameters(), { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'The picture',
              headers: {
                ...RATE_HEADERS,
                ETag: { required: true, schema: { type: 'string' } },
                'Cache-Control': { required: true, description: '`private, max-age=` what is left of cache_ttl', schema: { type: 'string' } },
                'X-Cache': { required: true, schema: { type: 'string', enum: ['hit', 'miss'] } },
              },
              content: {
                'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
                'image/jpeg': { schema: { type: 'string', contentMediaType: 'image/jpeg' } },
                'image/webp': { schema: { type: 'string', contentMediaType: 'image/webp' } },
                'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf' } },
              },
            },
            '202': {
              description: 'Not captured within render_timeout: the job goes on; poll status_url or load the link again',
              headers: { ...RATE_HEADERS, 'Retry-After': ref('headers', 'RetryAfter') },
              content: json({
                type: 'object',
                additionalProperties: false,
                required: ['job_id', 'status', 'status_url'],
                properties: { job_id: { type: 'string' }, status: { type: 'string', enum: ['pending', 'processing'] }, status_url: { type: 'string', format: 'uri' } },
              }),
            },
            '304': { description: 'Not modified (the ETag matched)' },
            '400': keyedError('Invalid parameters; the message names the field'),
            '401': ref('responses', 'Unauthorized'),
            '403': {
              description: 'error is "Invalid signature" (missing, wrong, or the key has no signing secret), "Link expired", or as for POST',
              content: json(ref('schemas', 'Error')),
            },
            '429': ref('responses', 'RateLimited'),
            '500': ref('responses', 'InternalError'),
            '502': keyedError('error is "Capture failed": the job failed; message says why'),
            '503': {
              description: 'The capture queue is full, the account already has its share of it waiting or running, or the service is shutting down',
              headers: { ...RATE_HEADERS, 'Retry-After': ref('headers', 'RetryAfter') },
              content: json(ref('schemas', 'Error')),
            },
          },
        },
      },
      '/screenshot/{job_id}': {
        get: {
          operationId: 'getScreenshot',
          tags: ['screenshots'],
          summary: 'Status and result of a job',
          parameters: [
            { name: 'job_id', in: 'path', required: true, schema: { type: 'string' }, description: 'From the create response' },
            ...queryParameters(ScreenshotQuery),
          ],
          responses: {
            '200': { description: 'The job', headers: RATE_HEADERS, content: json(ref('schemas', 'ScreenshotJob')) },
            '404': keyedError('No such job, or a job of another account'),
            ...AUTH_ERRORS,
          },
        },
      },
      '/usage': {
        get: {
          operationId: 'getUsage',
          tags: ['usage'],
          summary: "Usage counters of the key's account",
          responses: {
            '200': { description: 'The usage record', headers: RATE_HEADERS, content: json(ref('schemas', 'Usage')) },
            ...AUTH_ERRORS,
          },
        },
      },
      '/files/{name}': {
        get: {
          operationId: 'getScreenshotFile',
          tags: ['screenshots'],
          summary: 'The image behind a screenshot_url',
          description: 'Needs no key: the random file name is the capability, so the address can go straight into an <img>.',
          security: [],
          parameters: [
            { name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: FILE_NAME_PATTERN } },
            { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
            { name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'One byte range: bytes=a-b, bytes=a- or bytes=-n' },
            { name: 'If-Range', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag a range is asked of; another answers the whole image' },
          ],
          responses: {
            '200': {
              description: 'The image',
              headers: {
                ETag: { required: true, schema: { type: 'string' } },
                'Cache-Control': { required: true, schema: { type: 'string' } },
                'Accept-Ranges': { schema: { type: 'string', enum: ['bytes'] } },
              },
              content: {
                'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
                'image/jpeg': { schema: { type: 'string', contentMediaType: 'image/jpeg' } },
                'image/webp': { schema: { type: 'string', contentMediaType: 'image/webp' } },
                'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf' } },
              },
            },
            '206': {
              description: 'The bytes of the range asked for',
              headers: { 'Content-Range': { required: true, schema: { type: 'string' } }, ETag: { required: true, schema: { type: 'string' } } },
              content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
            },
            '302': {
              description: 'With object storage and SCREENSHOT_S3_PRESIGNED: once the checks pass, a short-lived presigned address of the image',
              headers: { Location: { required: true, schema: { type: 'string', format: 'uri' } } },
            },
            '304': { description: 'Not modified (the ETag matched)' },
            '404': { description: 'No such file, or removed after the retention period', content: json(ref('schemas', 'Error')) },
            '416': { description: 'The range starts past the end of the image', headers: { 'Content-Range': { required: true, schema: { type: 'string' } } } },
            '429': { description: 'Too many image requests from this address', content: json(ref('schemas', 'RateLimitError')) },
            '500': ref('responses', 'InternalError'),
            '503': { description: 'The file storage did not answer; try again shortly', content: json(ref('schemas', 'Error')) },
          },
        },
      },
      '/files/{name}/evidence.wacz': {
        get: {
          operationId: 'getEvidenceBundle',
          tags: ['evidence'],
          summary: 'The signed WACZ bundle behind an evidence_url',
          description: 'Needs no key, like the image: its capability name followed by /evidence.wacz. Only for a job asked with evidence: true (docs/evidence.md).',
          security: [],
          parameters: [
            { name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: FILE_NAME_PATTERN } },
            { name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'One byte range, as for the image (replay tools read a WACZ by ranges)' },
          ],
          responses: {
            '200': {
              description: 'The bundle',
              headers: { ETag: { required: true, schema: { type: 'string' } }, 'Cache-Control': { required: true, schema: { type: 'string' } } },
              content: { 'application/wacz': { schema: { type: 'string', contentMediaType: 'application/wacz' } } },
            },
            '206': {
              description: 'The bytes of the range asked for',
              headers: { 'Content-Range': { required: true, schema: { type: 'string' } }, ETag: { required: true, schema: { type: 'string' } } },
              content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
            },
            '304': { description: 'Not modified (the ETag matched)' },
            '404': { description: 'No such bundle, or removed after the retention period', content: json(ref('schemas', 'Error')) },
            '416': { description: 'The range starts past the end of the bundle', headers: { 'Content-Range': { required: true, schema: { type: 'string' } } } },
            '429': { description: 'Too many image requests from this address', content: json(ref('schemas', 'RateLimitError')) },
            '500': ref('responses', 'InternalError'),
            '503': { description: 'The file storage did not answer; try again shortly', content: json(ref('schemas', 'Error')) },
          },
        },
      },
      '/evidence/public-key': {
        get: {
          operationId: 'getEvidencePublicKey',
          tags: ['evidence'],
          summary: "The appliance's evidence signing key",
          description: 'Needs no key. The Ed25519 public key, base64 of its SubjectPublicKeyInfo (DER), as a bundle names it in signedData.publicKey.',
          security: [],
          responses: {
            '200': {
              description: 'The public key',
              content: json({
                type: 'object',
                required: ['algorithm', 'public_key'],
                additionalProperties: false,
                properties: { algorithm: { type: 'string', enum: ['Ed25519'] }, public_key: { type: 'string' } },
              }),
            },
            '500': ref('responses', 'InternalError'),
          },
        },
      },
      '/evidence/verify': {
        post: {
          operationId: 'verifyEvidenceBundle',
          tags: ['evidence'],
          summary: 'Checks an evidence bundle: its digests, its signature and whose key made it',
          description: `The bundle is the body, at most ${VERIFY_MAX_BYTES / 1024 / 1024} MB. \`screenshot-appliance verify FILE\` does the same offline.`,
          requestBody: {
            required: true,
            content: {
              'application/wacz': { schema: { type: 'string', contentMediaType: 'application/wacz' } },
              'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } },
            },
          },
          responses: {
            '200': {
              description: 'What the check found (a bundle that fails it is still a 200: see valid and problems)',
              headers: RATE_HEADERS,
              content: json({
                type: 'object',
                required: ['valid', 'signed_by_this_appliance', 'created_at', 'url', 'public_key', 'problems'],
                additionalProperties: false,
                properties: {
                  valid: { type: 'boolean', description: 'Every digest matches and the signature is good' },
                  signed_by_this_appliance: { type: 'boolean', description: "Valid, and signed with this appliance's key" },
                  created_at: { type: ['string', 'null'], description: 'When the bundle says it was made' },
                  url: { type: ['string', 'null'], description: 'The page the bundle holds' },
                  public_key: { type: ['string', 'null'], description: 'The key that signed it (base64 SubjectPublicKeyInfo)' },
                  problems: { type: 'array', items: { type: 'string' }, description: 'What is wrong, naming the file; [] when valid' },
                },
              }),
            },
            '413': keyedError('The bundle is larger than the limit'),
            '415': keyedError('Content-Type is neither application/wacz nor application/zip'),
            ...AUTH_ERRORS,
          },
        },
      },
      '/files/{name}/thumbnail': {
        get: {
          operationId: 'getScreenshotThumbnail',
          tags: ['screenshots'],
          summary: 'A 320 px wide WebP of the image behind a screenshot_url',
          description: 'Needs no key, like the image: its capability name followed by /thumbnail. Made when the capture is stored, or from the image when first asked for. A PDF has none.',
          security: [],
          parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: FILE_NAME_PATTERN } }],
          responses: {
            '200': {
              description: 'The thumbnail (the top of a tall page)',
              headers: { 'Cache-Control': { required: true, schema: { type: 'string' } } },
              content: { 'image/webp': { schema: { type: 'string', contentMediaType: 'image/webp' } } },
            },
            '404': { description: 'No such image, a PDF, or removed after the retention period', content: json(ref('schemas', 'Error')) },
            '429': { description: 'Too many image requests from this address', content: json(ref('schemas', 'RateLimitError')) },
            '500': ref('responses', 'InternalError'),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          tags: ['meta'],
          summary: 'This document',
          security: [],
          responses: {
            '200': { description: 'The OpenAPI 3.1 document of v1', content: json({ type: 'object' }) },
          },
        },
      },
    },
    webhooks: {
      ...monitorWebhooks(parts),
      ...batchWebhooks(parts),
      screenshotEnded: {
        post: {
          operationId: 'screenshotEnded',
          summary: 'A job ended (completed or failed)',
          description:
            'POSTed to the job\'s `callback_url`, signed per Standard Webhooks with the account\'s `whsec_` secret: ' +
            '`webhook-signature` is `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`. A 2xx answer ' +
            'is success; anything else is retried with backoff (about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h); 410 stops the ' +
            'retries; redirects are not followed.',
          parameters: [
            { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string', pattern: '^\\d+$' } },
            { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string', pattern: '^v1,' } },
          ],
          requestBody: { required: true, content: json(ref('schemas', 'WebhookEvent')) },
          responses: {
            '2XX': { description: 'Delivered' },
            '410': { description: 'Gone: no further attempts for this delivery' },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A key created in the control panel (`sa_…`)' },
      },
      headers: {
        RateLimitLimit: { required: true, description: 'The daily limit of the account', schema: { type: 'string', pattern: '^\\d+$' } },
        RateLimitRemaining: { required: true, description: 'Calls left today, never negative', schema: { type: 'string', pattern: '^\\d+$' } },
        RateLimitReset: { required: true, description: 'Unix time (seconds) of the next 00:00 UTC', schema: { type: 'string', pattern: '^\\d+$' } },
        RetryAfter: { required: true, description: 'Seconds to wait, at least 1', schema: { type: 'string', pattern: '^[1-9]\\d*$' } },
      },
      responses: {
        Unauthorized: { description: 'X-API-Key missing, unknown or revoked', content: json(ref('schemas', 'Error')) },
        Forbidden: {
          description: 'error is "IP not allowed" (outside the key\'s whitelist), "Email not verified" or "Access denied" (not on the Super User plan)',
          headers: RATE_HEADERS,
          content: json(ref('schemas', 'Error')),
        },
        RateLimited: {
          description: 'More than the requests per second, or the daily or monthly limit reached',
          headers: { ...RATE_HEADERS, 'Retry-After': ref('headers', 'RetryAfter') },
          content: json(ref('schemas', 'RateLimitError')),
        },
        InternalError: { description: 'A fault of the service; the message never carries internals', content: json(ref('schemas', 'Error')) },
      },
      schemas: {
        ...componentSchemas({ ...V1_SCHEMAS, WebhookEvent, ...MONITOR_SCHEMAS, MonitorEvent, ...LOGIN_SCHEMAS, ...BATCH_SCHEMAS, BatchEvent }),
        ScreenshotJob: jobOneOf('Job'),
      },
    },
  };
}
