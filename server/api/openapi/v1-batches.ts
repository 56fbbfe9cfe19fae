import { Type } from 'typebox';

import { BatchEventData, BatchQuery, BatchRequest, MAX_BATCH_ITEMS } from '../../contract/batches.js';
import { plain, queryParameters } from './components.js';
import type { V1DocumentParts } from './v1-monitors.js';

/** What a batch's callback_url receives when it ends. */
export const BatchEvent = Type.Object(
  {
    type: Type.Literal('batch.completed'),
    timestamp: Type.String({ format: 'date-time', description: 'When the batch ended, ISO 8601 in UTC' }),
    data: BatchEventData,
  },
  { additionalProperties: false },
);

const id = { name: 'batch_id', in: 'path', required: true, schema: { type: 'string' }, description: 'The batch id (batch_…)' };

/** The /batches paths of the v1 document. */
export function batchPaths({ json, ref, rateHeaders, authErrors, keyedError }: V1DocumentParts): Record<string, unknown> {
  const ok = (description: string, schema: string) => ({ description, headers: rateHeaders, content: json(ref('schemas', schema)) });
  const notFound = keyedError('No such batch, or a batch of another account');
  const tags = ['batches'];
  return {
    '/batches': {
      post: {
        operationId: 'createBatch',
        tags,
        summary: `Create a batch: up to ${MAX_BATCH_ITEMS} captures, or the pages of a sitemap, in one request`,
        description:
          'Each item is a POST /screenshot body (one device) over the shared options, the other fields of this body. Validated whole: ' +
          'a bad item is a 400 naming items[i].field and nothing is queued. Each item counts as one call; a batch that would pass a ' +
          'limit is refused whole. The batch is fed into the queue as its jobs end, so it is never refused for the queue\'s room.',
        parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, description: 'A retry with the same key and body within 24 hours answers the same batch', schema: { type: 'string' } }],
        requestBody: { required: true, content: json(plain(BatchRequest)) },
        responses: {
          '201': ok('The batch', 'BatchCreated'),
          '400': keyedError('A field or an item is invalid (message names it), or the sitemap could not be read'),
          '409': keyedError('A request with this Idempotency-Key is still being answered'),
          '413': keyedError('The body is too large'),
          '422': keyedError('This Idempotency-Key was used with another body'),
          ...authErrors,
        },
      },
    },
    '/batches/{batch_id}': {
      get: {
        operationId: 'getBatch',
        tags,
        summary: 'A batch: counts by state, progress, time left and a page of its jobs by index',
        parameters: [id, ...queryParameters(BatchQuery)],
        responses: { '200': ok('The batch', 'BatchResource'), '400': keyedError('A query parameter is invalid'), '404': notFound, ...authErrors },
      },
      delete: {
        operationId: 'cancelBatch',
        tags,
        summary: 'Cancel a batch: its items not yet in the queue never run',
        parameters: [id],
        responses: { '200': ok('The batch, cancelled', 'BatchResource'), '404': notFound, ...authErrors },
      },
    },
    '/batches/{batch_id}/archive': {
      get: {
        operationId: 'getBatchArchive',
        tags,
        summary: 'A ZIP of the completed images with manifest.json and manifest.csv, streamed',
        parameters: [id],
        responses: {
          '200': { description: 'The archive', headers: rateHeaders, content: { 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } } } },
          '404': notFound,
          ...authErrors,
        },
      },
    },
  };
}

/** The batch's webhook, for the document's `webhooks`. */
export function batchWebhooks({ json, ref }: V1DocumentParts): Record<string, unknown> {
  return {
    batchEvent: {
      post: {
        operationId: 'batchEvent',
        summary: 'A batch ended (completed or cancelled)',
        description: "POSTed to the batch's `callback_url`, signed as the screenshot webhooks are.",
        parameters: [
          { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string', pattern: '^\\d+$' } },
          { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string', pattern: '^v1,' } },
        ],
        requestBody: { required: true, content: json(ref('schemas', 'BatchEvent')) },
        responses: { '2XX': { description: 'Delivered' }, '410': { description: 'Gone: no further attempts for this delivery' } },
      },
    },
  };
}
