/** The event a job's end sends to its callback_url; a monitor's check sends the monitor.* ones to the monitor's. */
export type EventType = 'screenshot.completed' | 'screenshot.failed' | 'monitor.changed' | 'monitor.inconclusive' | 'monitor.failed' | 'batch.completed';
/** Where a delivery stands: still to be sent, delivered, or given up. */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A webhook delivery as the stores keep it: what is sent and every attempt; times are epoch milliseconds. */
export interface DeliveryDoc {
  _id: string;
  job_id: string;
  account_id: string;
  url: string;
  type: EventType;
  /** The exact JSON body, so every attempt signs and sends the same bytes. */
  body: string;
  status: DeliveryStatus;
  attempts: Array<{ at: number; status_code: number | null; error: string | null; duration_ms: number; manual: boolean }>;
  /** Scheduled (not manual) attempts made so far. */
  scheduled_attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  completed_at: number | null;
  /** Cluster mode: the node making the next attempt, and until when that reservation holds. */
  reserved_by?: string | null;
  reserved_until?: number | null;
}

export type AttemptRecord = DeliveryDoc['attempts'][number];
