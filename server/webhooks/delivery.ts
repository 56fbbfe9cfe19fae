import type { DeliveryDoc, DeliveryStatus, EventType } from '../store/records/delivery-record.js';
import { formatIsoSeconds } from '../time.js';

/** One try at delivering, as recorded. */
export interface WebhookAttempt {
  /** ISO 8601, UTC, whole seconds. */
  at: string;
  /** The receiver's HTTP status, or null when none came (network error, time-out, egress denial). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** True for an attempt the admin asked for (redeliver); those do not use up the schedule. */
  manual: boolean;
}

/** A webhook delivery as the admin API shows it. */
export interface WebhookDelivery {
  /** Also the `webhook-id` header, the same on every attempt. */
  id: string;
  job_id: string;
  account_id: string;
  url: string;
  type: EventType;
  status: DeliveryStatus;
  attempts: WebhookAttempt[];
  /** When the next scheduled attempt is due; null once the delivery succeeded or failed. */
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
}

export function deliveryView(doc: DeliveryDoc): WebhookDelivery {
  return {
    id: doc._id,
    job_id: doc.job_id,
    account_id: doc.account_id,
    url: doc.url,
    type: doc.type,
    status: doc.status,
    attempts: doc.attempts.map((a) => ({
      at: formatIsoSeconds(a.at),
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
      manual: a.manual,
    })),
    next_attempt_at: doc.next_attempt_at === null ? null : formatIsoSeconds(doc.next_attempt_at),
    created_at: formatIsoSeconds(doc.created_at),
    completed_at: doc.completed_at === null ? null : formatIsoSeconds(doc.completed_at),
  };
}
