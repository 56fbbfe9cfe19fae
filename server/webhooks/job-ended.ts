import { toStatusResource } from '../jobs/job-resource.js';
import type { Logger } from '../logger.js';
import type { JobRecord } from '../store/records/job-record.js';
import type { JobStore } from '../store/stores.js';
import type { WebhookService } from './webhook-service.js';

/** Jobs whose webhook is queued per look for those left due. */
const DUE_BATCH = 100;

export interface JobEndWebhooks {
  /** Queues the webhook of a job that has just ended (not awaited; a failure is logged). */
  announce(job: JobRecord): void;
  /**
   * Queues the webhooks of jobs that ended before `cutoff` and are still marked `webhook_due`:
   * their process stopped between storing the end and storing its delivery. Returns how many.
   */
  recover(cutoff: number): Promise<number>;
}

/**
 * What a job's end sends to its `callback_url`: `screenshot.completed` or `screenshot.failed`
 * carrying the job as its status endpoint shows it. A job without a callback_url sends nothing.
 * The end is stored with `webhook_due` (JobRunner), the delivery is stored, then the mark is
 * cleared: a stop anywhere in between leaves the mark, and `recover` queues the delivery then
 * (once: its id follows from the job).
 */
export function jobEndWebhooks(webhooks: WebhookService, jobs: JobStore, log: Logger): JobEndWebhooks {
  const events = log.child({ component: 'webhooks' });
  const queue = async (job: JobRecord) => {
    if (job.callback_url) {
      const type = job.status === 'completed' ? 'screenshot.completed' : 'screenshot.failed';
      const target = { job_id: job._id, account_id: job.account_id, callback_url: job.callback_url };
      await webhooks.notify(target, type, toStatusResource(job, job.base_url));
    }
    if (job.webhook_due) await jobs.update(job._id, { webhook_due: false });
  };
  return {
    announce(job) {
      queue(job).catch((err: unknown) => events.error({ job_id: job._id, err }, 'could not queue the webhook; it is queued at the next start, or by another node'));
    },
    async recover(cutoff) {
      let queued = 0;
      for (;;) {
        const due = await jobs.webhookDue(cutoff, DUE_BATCH);
        for (const job of due) await queue(job);
        queued += due.length;
        if (due.length < DUE_BATCH) return queued;
      }
    },
  };
}
