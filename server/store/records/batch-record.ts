/** A batch's state: feeding its items into the queue, ended, or stopped by its owner. */
export type BatchStatus = 'running' | 'completed' | 'cancelled';

/**
 * A batch as stored in batches.db (POST /v1/batches): many captures admitted in one request, fed
 * into the queue a few at a time as its account's turns come. Its items (the parameters of each
 * capture, secrets included) are kept sealed apart from this record (BatchStore.items), which is
 * written again at every job it feeds and every end it counts.
 */
export interface BatchRecord {
  _id: string;
  account_id: string;
  key_id: string;
  status: BatchStatus;
  /** How many items the request gave. */
  total: number;
  /** The jobs fed so far, in item order: item i's job is `jobs[i]`. */
  jobs: string[];
  /** How many of those jobs have ended completed, and failed. */
  completed: number;
  failed: number;
  /** Where `batch.completed` is sent, or null. */
  callback_url: string | null;
  /** Origin the batch was created through; its addresses in answers and the webhook are built from it. */
  base_url: string;
  created_at: number;
  /** When it ended (completed or cancelled); null while running. */
  ended_at: number | null;
}
