import type Router from '@koa/router';
import { badRequest } from '../errors.js';
import type { WebhookService } from '../webhooks/webhook-service.js';

/**
 * Webhook deliveries for the admin API: `GET /admin/api/webhooks?job_id=&limit=` answers
 * `{deliveries: [...]}` (newest first, each with its attempts) and
 * `POST /admin/api/webhooks/:id/redeliver` sends one again now and answers the delivery.
 * Mount on the admin router (prefix `/admin/api`, behind the admin token); on a router without
 * that prefix the full paths are registered.
 */
export function adminWebhookRoutes(router: Router, webhooks: WebhookService): void {
  const base = router.opts.prefix?.endsWith('/admin/api') ? '' : '/admin/api';

  router.get(`${base}/webhooks`, async (ctx) => {
    const jobId = ctx.query.job_id;
    if (jobId !== undefined && typeof jobId !== 'string') throw badRequest('job_id must be given once');
    const rawLimit = ctx.query.limit;
    let limit: number | undefined;
    if (rawLimit !== undefined && rawLimit !== '') {
      limit = Number(rawLimit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest('limit must be a whole number from 1 to 1000');
    }
    ctx.body = { deliveries: await webhooks.list({ job_id: jobId || undefined, limit }) };
  });

  router.post(`${base}/webhooks/:id/redeliver`, async (ctx) => {
    ctx.body = await webhooks.redeliver(ctx.params.id);
  });
}
