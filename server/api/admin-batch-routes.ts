import type Router from '@koa/router';

import { type AdminBatch, AdminBatchesQuery } from '../contract/batches.js';
import { validateQuery } from '../contract/validate.js';
import { batchArchive } from '../jobs/batch-archive.js';
import type { BatchService } from '../jobs/batch-service.js';
import type { JobService } from '../jobs/job-service.js';
import type { Logger } from '../logger.js';
import type { FileStore } from '../store/file-store.js';
import type { BatchRecord } from '../store/records/batch-record.js';
import { formatIsoSeconds } from '../time.js';
import type { AdminAuthDeps } from './admin-auth.js';
import { adminApiRouter } from './admin-router.js';

export interface AdminBatchDeps extends AdminAuthDeps {
  batches: BatchService;
  jobs: JobService;
  files: FileStore;
  log: Logger;
}

/** A batch as the control panel lists it. */
function adminBatch(batch: BatchRecord): AdminBatch {
  return {
    batch_id: batch._id,
    account_id: batch.account_id,
    status: batch.status,
    total: batch.total,
    completed: batch.completed,
    failed: batch.failed,
    progress: Math.round(((batch.completed + batch.failed) / batch.total) * 1000) / 1000,
    created_at: formatIsoSeconds(batch.created_at),
    archive_url: `/admin/api/batches/${batch._id}/archive`,
  };
}

/** /admin/api/batches — every account's newest batches for the control panel, and their archives. */
export function adminBatchRoutes(deps: AdminBatchDeps): Router {
  const router = adminApiRouter(deps);

  router.get('/batches', async (ctx) => {
    const { limit } = validateQuery(AdminBatchesQuery, ctx.query) as { limit: number };
    ctx.body = { batches: (await deps.batches.recent(limit)).map(adminBatch) };
  });

  router.get('/batches/:id/archive', async (ctx) => {
    const batch = await deps.batches.get(ctx.params.id);
    ctx.type = 'application/zip';
    ctx.set('Content-Disposition', `attachment; filename="${batch._id}.zip"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = batchArchive(batch, { job: (id) => deps.jobs.find(id), files: deps.files, log: deps.log });
  });

  return router;
}
