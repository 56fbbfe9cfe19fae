import { describe, expect, it, vi } from 'vitest';

import { lineLogger } from '../../server/logger.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import { jobEndWebhooks } from '../../server/webhooks/job-ended.js';
import type { WebhookJob, WebhookService } from '../../server/webhooks/webhook-service.js';
import { FakeJobStore, pendingJob } from '../helpers/fake-job-store.js';

// The webhook a job's end sends, and the `webhook_due` mark that makes a stop between the end
// and its delivery harmless: over an in-memory store and a webhook service that only records.

const HOOK = 'https://example.com/hook';

/** A webhook service that records what it is asked to send; `refuse` makes notify reject. */
function recordingWebhooks(refuse = false) {
  const sent: Array<{ target: WebhookJob; type: string; data: Record<string, unknown> }> = [];
  const service = {
    notify: (target: WebhookJob, type: string, data: Record<string, unknown>) => {
      if (refuse) return Promise.reject(new Error('delivery store away'));
      sent.push({ target, type, data });
      return Promise.resolve();
    },
  } as unknown as WebhookService;
  return { service, sent };
}

const ended = (id: string, fields: Partial<JobRecord> = {}) =>
  pendingJob({ _id: id, status: 'completed', image_file: `${id}.png`, completed_at: 5_000, callback_url: HOOK, webhook_due: true, ...fields });

describe('jobEndWebhooks', () => {
  it('sends screenshot.completed with the job as its status endpoint shows it, then clears the mark', async () => {
    const job = ended('j1', { account_id: 'acc-1' });
    const store = new FakeJobStore([job]);
    const { service, sent } = recordingWebhooks();
    jobEndWebhooks(service, store, lineLogger(() => undefined)).announce(job);
    await vi.waitFor(() => expect(store.job('j1').webhook_due).toBe(false));
    expect(sent).toEqual([
      { target: { job_id: 'j1', account_id: 'acc-1', callback_url: HOOK }, type: 'screenshot.completed', data: expect.objectContaining({ job_id: 'j1', status: 'completed' }) },
    ]);
  });

  it('sends screenshot.failed for a failed job', async () => {
    const job = ended('j1', { status: 'failed', image_file: null, error: 'boom' });
    const { service, sent } = recordingWebhooks();
    jobEndWebhooks(service, new FakeJobStore([job]), lineLogger(() => undefined)).announce(job);
    await vi.waitFor(() => expect(sent.map((s) => s.type)).toEqual(['screenshot.failed']));
  });

  it('sends nothing for a job without a callback_url', async () => {
    const job = ended('j1', { callback_url: null, webhook_due: undefined });
    const store = new FakeJobStore([job]);
    const { service, sent } = recordingWebhooks();
    jobEndWebhooks(service, store, lineLogger(() => undefined)).announce(job);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sent).toEqual([]);
    expect(store.updates).toEqual([]);
  });

  it('keeps the mark, and says so in the log, when the delivery could not be stored', async () => {
    const job = ended('j1');
    const store = new FakeJobStore([job]);
    const lines: string[] = [];
    jobEndWebhooks(recordingWebhooks(true).service, store, lineLogger((line) => lines.push(line))).announce(job);
    await vi.waitFor(() => expect(lines.join('\n')).toMatch(/could not queue the webhook/));
    expect(store.job('j1').webhook_due).toBe(true);
  });

  it('queues at recovery every marked job that ended before the cutoff, in batches, and says how many', async () => {
    const due = Array.from({ length: 230 }, (_, i) => ended(`due-${i}`, { completed_at: 1_000 + i }));
    const store = new FakeJobStore([...due, ended('after-cutoff', { completed_at: 9_000 }), ended('done', { webhook_due: false })]);
    const { service, sent } = recordingWebhooks();
    const batches = vi.spyOn(store, 'webhookDue');
    expect(await jobEndWebhooks(service, store, lineLogger(() => undefined)).recover(5_000)).toBe(230);
    expect(new Set(sent.map((s) => s.target.job_id))).toEqual(new Set(due.map((j) => j._id)));
    expect(batches).toHaveBeenCalledTimes(3);
    expect(store.job('after-cutoff').webhook_due).toBe(true);
    expect(await store.webhookDue(5_000, 100)).toEqual([]);
  });
});
