import type Router from '@koa/router';

import { WebhooksQuery } from '../contract/admin.js';
import { validateQuery } from '../contract/validate.js';
import type { WebhookService } from '../webhooks/webhook-service.js';

/**
 * Webhook deliveries for the admin API: `GET /admin/api/webhooks?job_id=&limit=` answers
 * `{deliveries: [...]}` (newest first, each with its attempts) and
 * `POST /admin/api/webhooks/:id/redeliver` sends one again now and answers the delivery.
 * Registered on the admin router (prefix `/admin/api`, behind the admin token).
 */
export function adminWebhookRoutes(router: Router, webhooks: WebhookService): void {
  router.get('/webhooks', async (ctx) => {
    const { job_id: jobId, limit } = validateQuery(WebhooksQuery, ctx.query);
    ctx.body = { deliveries: await webhooks.list({ job_id: jobId, limit }) };
  });

  router.post('/webhooks/:id/redeliver', async (ctx) => {
    ctx.body = await webhooks.redeliver(ctx.params.id);
  });
}
