import type { BatchRecord } from '../store/records/batch-record.js';

/** Absolute address of a batch's status endpoint. */
export const batchStatusUrl = (baseUrl: string, batchId: string) => `${baseUrl}/v1/batches/${batchId}`;

/** Absolute address of a batch's archive (its completed images, manifest.json and manifest.csv). */
export const batchArchiveUrl = (baseUrl: string, batchId: string) => `${baseUrl}/v1/batches/${batchId}/archive`;

/**
 * A batch's status as the API names it: `pending` until one of its jobs has started (one ended,
 * or one is being captured), then `running` until it ends.
 */
export function batchStatus(batch: BatchRecord, processing: number): 'pending' | 'running' | 'completed' | 'cancelled' {
  if (batch.status !== 'running') return batch.status;
  return batch.completed + batch.failed + processing > 0 ? 'running' : 'pending';
}

/**
 * What `batch.completed` carries: the batch's end, its counts as it ended and where its archive
 * is. `not_ended` is 0 for a completed batch; for a cancelled one it counts the items never run
 * and the few already in the queue, which still run (GET tells their end).
 */
export function batchEndedEvent(batch: BatchRecord): Record<string, unknown> {
  return {
    batch_id: batch._id,
    status: batch.status,
    total: batch.total,
    counts: { completed: batch.completed, failed: batch.failed, not_ended: batch.total - batch.completed - batch.failed },
    status_url: batchStatusUrl(batch.base_url, batch._id),
    archive_url: batchArchiveUrl(batch.base_url, batch._id),
  };
}
