// The shapes the admin API answers with, derived from the schemas that validate and document
// it (server/contract/), so the panel and the server cannot drift apart. Types only: no
// server code reaches the bundle.

import type { Account, AdminJob, ApiKey, ApiKeyCreated, Plan, Settings, Status, UsageByDay, WebhookDelivery } from '../../server/contract/admin.js';
import type { AdminBatch } from '../../server/contract/batches.js';
import type { CaptureWarning, JobStatus, QueueStats } from '../../server/contract/common.js';
import type { Monitor, MonitorCheck } from '../../server/contract/monitors.js';
import type { StorageDestination } from '../../server/contract/storage.js';

export type { Account, AdminBatch, AdminJob, CaptureWarning, JobStatus, Monitor, MonitorCheck, Plan, Settings, Status, StorageDestination, WebhookDelivery };
export type QueueState = QueueStats;
export type Key = ApiKey;
/** Only the create answer carries the secret key, and only once. */
export type CreatedKey = ApiKeyCreated;
export type Usage = UsageByDay;

/** A page of GET /admin/api/jobs. */
export interface JobPage {
  jobs: AdminJob[];
  next_before: string | null;
}

export type { NetworkScope } from '../../server/contract/admin.js';
export type { LoginView as Login, LoginType } from '../../server/contract/logins.js';
