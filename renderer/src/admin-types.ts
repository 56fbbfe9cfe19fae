// The shapes the admin API answers with (see DESIGN.md, "Admin API and control panel").

export type Plan = 'super_user' | 'basic';
export type JobStatus = 'pending' | 'processing' | 'completed' | 'failed';

export interface QueueState {
  pending: number;
  running: number;
  concurrency: number;
  limit: number;
  paused: boolean;
}

export interface HourBucket {
  /** Start of the hour, ISO 8601 UTC. */
  hour: string;
  completed: number;
  failed: number;
}

export interface Status {
  queue: QueueState;
  /** `version` is null until the browser is up. */
  engine: { name: string; version: string | null; ready: boolean; browsers: number; browsers_ready: number };
  /** The last 24 hours, oldest first. */
  captures_per_hour: HourBucket[];
  api_base_url: string;
}

export interface Account {
  id: string;
  email: string;
  email_verified: boolean;
  plan: Plan;
  daily_limit: number;
  monthly_limit: number;
  created_at: string;
  calls_today: number;
  calls_this_month: number;
}

export interface Key {
  id: string;
  account_id: string;
  name: string;
  /** The first characters of the key, enough to recognise it. */
  prefix: string;
  ip_whitelist: string[];
  created_at: string;
  last_used_at: string | null;
  revoked: boolean;
}

/** Only the create answer carries the secret key, and only once. */
export interface CreatedKey extends Key {
  key: string;
}

export interface AdminJob {
  job_id: string;
  status: JobStatus;
  progress: number;
  url: string;
  preset: string;
  full_page: boolean;
  googlebot: boolean;
  /** `YYYY-MM-DD HH:MM:SS`, UTC. */
  created_at: string;
  screenshot_url?: string;
  completed_at?: string;
  error?: string;
  has_page_source?: boolean;
  account_id: string;
  /** Null when the account has been deleted since. */
  email: string | null;
  device: string;
  format: string;
  callback_url: string | null;
  duration_ms: number | null;
  blocked_requests: number;
  expired: boolean;
}

export interface JobPage {
  jobs: AdminJob[];
  next_before: string | null;
}

export interface DayCount {
  /** `YYYY-MM-DD` */
  date: string;
  count: number;
}

export interface Usage {
  days: DayCount[];
  accounts?: { account_id: string; email: string; days: DayCount[] }[];
}

export type { Settings } from '../../server/settings-shape.js';

export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** True for an attempt the admin asked for with "Redeliver". */
  manual?: boolean;
}

export interface WebhookDelivery {
  id: string;
  job_id: string;
  url: string;
  type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
}
