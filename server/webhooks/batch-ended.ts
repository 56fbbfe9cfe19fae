import { batchEndedEvent } from '../jobs/batch-resource.js';
import type { Logger } from '../logger.js';
import type { BatchRecord } from '../store/records/batch-record.js';
import type { WebhookService } from './webhook-service.js';

/**
 * What a batch's end sends to its `callback_url`: one `batch.completed` (also when it was
 * cancelled: `status` says which), signed and retried like every webhook. Its `webhook-id`
 * follows from the batch, so an end notified twice is delivered once.
 */
export function batchEndWebhook(webhooks: WebhookService, log: Logger): (batch: BatchRecord) => void {
  const events = log.child({ component: 'webhooks' });
  return (batch) => {
    if (!batch.callback_url) return;
    const target = { job_id: batch._id, account_id: batch.account_id, callback_url: batch.callback_url };
    webhooks.notify(target, 'batch.completed', batchEndedEvent(batch)).catch((err: unknown) => events.error({ batch_id: batch._id, err }, "could not queue a batch's webhook"));
  };
}
