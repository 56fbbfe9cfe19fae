import crypto from 'node:crypto';

import type { AccountRecord } from '../../server/store/records/account-record.js';
import type { DeliveryDoc } from '../../server/store/records/delivery-record.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import type { KeyRecord } from '../../server/store/records/key-record.js';
import type { MonitorRecord } from '../../server/store/records/monitor-record.js';

// Records as the services write them, with every field a real one has, for the store
// conformance suite; each case overrides what it is about.

const id = (prefix: string) => `${prefix}_${crypto.randomBytes(6).toString('hex')}`;

/** A completed job of account `acc`, created at `created_at`. */
export function jobRecord(fields: Partial<JobRecord> = {}): JobRecord {
  const created_at = fields.created_at ?? 1_700_000_000_000;
  return {
    _id: id('job'),
    account_id: 'acc',
    key_id: 'key',
    batch_id: id('batch'),
    url: 'https://example.com/',
    device: 'desktop',
    preset: 'desktop',
    full_page: false,
    googlebot: false,
    viewport: { width: 1280, height: 800 },
    format: 'png',
    quality: null,
    callback_url: null,
    base_url: 'http://127.0.0.1:3000',
    status: 'completed',
    progress: 100,
    created_at,
    started_at: created_at + 10,
    completed_at: created_at + 1_000,
    error: null,
    image_file: `${id('img')}.png`,
    has_page_source: true,
    truncated: false,
    blocked_requests: 0,
    attempts: 1,
    duration_ms: 990,
    expired: false,
    options: { waitUntil: 'networkidle', hideSelectors: ['.banner'], clip: { x: 0, y: 0, width: 640, height: 480 } },
    has_secrets: false,
    secret_names: null,
    http_status: 200,
    final_url: 'https://example.com/',
    page_title: 'Example Domain',
    ...fields,
  };
}

/** A job not yet run. */
export function waitingJob(fields: Partial<JobRecord> = {}): JobRecord {
  return jobRecord({
    status: 'pending',
    progress: 0,
    started_at: null,
    completed_at: null,
    image_file: null,
    has_page_source: false,
    attempts: 0,
    duration_ms: null,
    http_status: null,
    final_url: null,
    page_title: null,
    ...fields,
  });
}

export function newAccount(fields: Partial<Omit<AccountRecord, '_id'>> = {}): Omit<AccountRecord, '_id'> {
  return {
    email: `${id('user')}@example.com`,
    email_verified: true,
    plan: 'super_user',
    daily_limit: 1_000,
    monthly_limit: 20_000,
    created_at: 1_700_000_000_000,
    webhook_secret: `whsec_${crypto.randomBytes(32).toString('base64')}`,
    ...fields,
  };
}

export function newKey(fields: Partial<Omit<KeyRecord, '_id'>> = {}): Omit<KeyRecord, '_id'> {
  return {
    account_id: 'acc',
    name: 'API key',
    hash: crypto.randomBytes(32).toString('hex'),
    prefix: 'sa_abcdef',
    ip_whitelist: ['127.0.0.1', '10.0.0.0/8'],
    created_at: 1_700_000_000_000,
    last_used_at: null,
    revoked: false,
    sealed_signing_secret: crypto.randomBytes(40).toString('base64'),
    ...fields,
  };
}

/** A delivery of a job's end, waiting for its first attempt. */
export function deliveryDoc(fields: Partial<DeliveryDoc> = {}): DeliveryDoc {
  const created_at = fields.created_at ?? 1_700_000_000_000;
  return {
    _id: id('msg'),
    job_id: 'job',
    account_id: 'acc',
    url: 'https://hooks.example.com/screenshots',
    type: 'screenshot.completed',
    body: JSON.stringify({ type: 'screenshot.completed', data: { job_id: 'job' } }),
    status: 'pending',
    attempts: [],
    scheduled_attempts: 0,
    next_attempt_at: created_at,
    created_at,
    completed_at: null,
    ...fields,
  };
}

/** An hourly monitor of account `acc1`, due at once, with no secret fields. */
export function monitorRecord(fields: Partial<MonitorRecord> = {}): MonitorRecord {
  return {
    _id: id('mon'),
    account_id: 'acc1',
    key_id: 'key1',
    name: null,
    request: { url: 'https://example.com/' },
    secret_fields: [],
    schedule: { every_minutes: 60 },
    threshold: 0.001,
    mask_selectors: [],
    callback_url: null,
    paused: false,
    baseline: 'previous',
    pinned_job_id: null,
    next_run_at: 1,
    failing: false,
    base_url: 'http://127.0.0.1:8080',
    created_at: 1,
    updated_at: 1,
    ...fields,
  };
}
