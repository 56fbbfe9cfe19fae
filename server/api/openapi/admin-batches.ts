import { AdminBatchesQuery, AdminBatchList } from '../../contract/batches.js';
import type { AdminDocumentParts } from './admin-monitors.js';
import { queryParameters } from './components.js';

/** The admin's batch schemas, as components. */
export const ADMIN_BATCH_SCHEMAS = { AdminBatchList };

/** The /batches paths of the admin document: every account's newest batches, and their archives. */
export function adminBatchPaths({ json, ref, errors, errors404 }: AdminDocumentParts): Record<string, unknown> {
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The batch id (batch_…)' };
  return {
    '/batches': {
      get: {
        operationId: 'adminListBatches',
        summary: "Every account's newest batches with their progress",
        parameters: queryParameters(AdminBatchesQuery),
        responses: { '200': { description: 'The batches, newest first', content: json(ref('schemas', 'AdminBatchList')) }, ...errors },
      },
    },
    '/batches/{id}/archive': {
      get: {
        operationId: 'adminGetBatchArchive',
        summary: "A batch's archive: its completed images with manifest.json and manifest.csv, streamed",
        parameters: [id],
        responses: {
          '200': { description: 'The archive', content: { 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } } } },
          ...errors404,
        },
      },
    },
  };
}
