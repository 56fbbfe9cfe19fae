import type Router from '@koa/router';

import { type BatchCreated, BatchQuery, type BatchResource } from '../contract/batches.js';
import { validateQuery } from '../contract/validate.js';
import { batchArchive } from '../jobs/batch-archive.js';
import { batchArchiveUrl, batchStatus, batchStatusUrl } from '../jobs/batch-resource.js';
import type { BatchService, BatchView } from '../jobs/batch-service.js';
import { requestFingerprint } from '../jobs/idempotent-requests.js';
import type { SitemapReader } from '../jobs/sitemap-reader.js';
import type { Logger } from '../logger.js';
import { baseUrlOf } from './base-url.js';
import { parseBatchParams, sitemapItems } from './batch-params.js';
import { badRequest } from './error-responses.js';
import { idempotencyKeyOf } from './idempotency-key.js';
import { jsonBody, requestBody } from './json-body.js';
import { exactRouter } from './routing.js';
import { v1Auth, type V1State } from './v1-auth.js';
import type { V1Deps } from './v1-jobs.js';

export interface BatchRouteDeps extends V1Deps {
  batches: BatchService;
  /** Reads a batch's sitemap through the egress guard. */
  sitemaps: SitemapReader;
  log: Logger;
}

/** POST /v1/batches, GET and DELETE /v1/batches/:batch_id. */
export function batchRoutes(deps: BatchRouteDeps): Router {
  const router = exactRouter('/v1');
  const auth = v1Auth(deps);

  router.post('/batches', auth, async (ctx, next) => {
    if (!ctx.is('application/json')) throw badRequest('Content-Type must be application/json');
    await next();
  }, jsonBody, async (ctx) => {
    const { account, key } = ctx.state.v1 as V1State;
    const idempotencyKey = idempotencyKeyOf(ctx.req.headers['idempotency-key']);
    const body = requestBody(ctx);
    // Taken before the body is parsed, which fills in its defaults.
    const fingerprint = idempotencyKey === undefined ? '' : requestFingerprint(body);
    const params = parseBatchParams(body);
    const base = baseUrlOf(ctx, deps.settings);
    const create = async () => {
      // Read inside the request's run, so a retry with the same Idempotency-Key does not read it again.
      const items = 'items' in params ? params.items : sitemapItems(params, await deps.sitemaps.read(params.sitemap));
      if (items.some((item) => item.options.upload)) await deps.destinations.requireFor(account._id);
      const batch = await deps.batches.create(account._id, key._id, items, { callback_url: params.callback_url, base_url: base }, (count, make) =>
        deps.quota.chargeFor(account, count, make),
      );
      const created: BatchCreated = { batch_id: batch._id, status: 'pending', total: batch.total, status_url: batchStatusUrl(base, batch._id) };
      return { answer: { status: 201, body: created }, keep: true };
    };
    const { answer, replayed } =
      idempotencyKey === undefined
        ? { answer: (await create()).answer, replayed: false }
        : await deps.idempotency.once(account._id, 'POST /v1/batches', idempotencyKey, fingerprint, create);
    if (replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = answer.status;
    ctx.body = answer.body;
  });

  router.get('/batches/:batch_id', auth, async (ctx) => {
    const { account } = ctx.state.v1 as V1State;
    const query = validateQuery(BatchQuery, ctx.query) as { page: number; per_page: number };
    const batch = await deps.batches.getOwned(account._id, ctx.params.batch_id);
    const view = await deps.batches.view(batch, query.page, query.per_page);
    const next = view.more ? `${batchStatusUrl(batch.base_url, batch._id)}?page=${query.page + 1}&per_page=${query.per_page}` : undefined;
    ctx.body = batchResource(view, deps.batches.estimateSecondsLeft(batch), next);
  });

  router.get('/batches/:batch_id/archive', auth, async (ctx) => {
    const { account } = ctx.state.v1 as V1State;
    const batch = await deps.batches.getOwned(account._id, ctx.params.batch_id);
    ctx.type = 'application/zip';
    ctx.set('Content-Disposition', `attachment; filename="${batch._id}.zip"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = batchArchive(batch, { job: (id) => deps.jobs.find(id), files: deps.files, log: deps.log });
  });

  router.delete('/batches/:batch_id', auth, async (ctx) => {
    const { account } = ctx.state.v1 as V1State;
    const batch = await deps.batches.cancel(account._id, ctx.params.batch_id);
    ctx.body = batchResource(await deps.batches.view(batch, 1, 0), 0, undefined);
  });

  return router;
}

/** GET /v1/batches/{id}'s answer. */
function batchResource(view: BatchView, secondsLeft: number, nextPage: string | undefined): BatchResource {
  const { batch, counts } = view;
  return {
    batch_id: batch._id,
    status: batchStatus(batch, counts.processing),
    total: batch.total,
    counts,
    progress: Math.round(((counts.completed + counts.failed) / batch.total) * 1000) / 1000,
    estimated_seconds_left: secondsLeft,
    jobs: view.jobs.map(({ index, job }) => ({ index, job_id: job._id, url: job.url, status: job.status })),
    ...(nextPage ? { next_page: nextPage } : {}),
    archive_url: batchArchiveUrl(batch.base_url, batch._id),
  };
}
