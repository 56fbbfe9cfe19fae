import type { JobRecord } from '../jobs/job-record.js';
import { toStatusResource } from '../jobs/job-resource.js';
import type { Logger } from '../logger.js';
import type { WebhookService } from './webhook-service.js';

/**
 * What a job's end sends to its `callback_url`: `screenshot.completed` or `screenshot.failed`
 * carrying the job as its status endpoint shows it. A job without a callback_url sends nothing.
 */
export function notifyJobEnded(webhooks: WebhookService, log: Logger): (job: JobRecord) => void {
  const events = log.child({ component: 'webhooks' });
  return (job) => {
    if (!job.callback_url) return;
    const type = job.status === 'completed' ? 'screenshot.completed' : 'screenshot.failed';
    const target = { job_id: job._id, account_id: job.account_id, callback_url: job.callback_url };
    webhooks
      .notify(target, type, toStatusResource(job, job.base_url))
      .catch((err: unknown) => events.error({ job_id: job._id, err }, 'could not queue the webhook'));
  };
}
