import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';

import { NotFoundError } from '../domain-errors.js';
import type { EgressPolicy } from '../egress/policy.js';
import { type Logger,silentLogger } from '../logger.js';
import type { DeliveryStore } from '../store/stores.js';
import { type Clock,systemClock } from '../time.js';
import { type AttemptRecord, type DeliveryDoc, deliveryView, type EventType, type WebhookDelivery } from './delivery-store.js';
import { DEFAULT_SCHEDULE_MS, parseRetryAfter, retryDelay } from './retry-schedule.js';
import { type AttemptOutcome,sendWebhook } from './sender.js';
import { signWebhook } from './signing.js';

export type { WebhookAttempt, WebhookDelivery } from './delivery-store.js';

export interface WebhookJob {
  job_id: string;
  account_id: string;
  callback_url: string;
}

export interface WebhookService {
  /**
   * Persists a delivery for the job's end, then attempts it (not awaited by the caller). Its id
   * (the `webhook-id`) follows from the job and the event, so one end is stored once however often
   * it is notified (a restart, or two nodes, finding it again).
   */
  notify(job: WebhookJob, type: EventType, data: Record<string, unknown>): Promise<void>;
  /** Resumes pending deliveries (after a restart). */
  start(): Promise<void>;
  /** Stops timers, waits for in-flight attempts (bounded). */
  stop(): Promise<void>;
  /** Deliveries with their attempts, newest first. @default limit 100 */
  list(filter: { job_id?: string; limit?: number }): Promise<WebhookDelivery[]>;
  /** Sends again now, with the same webhook-id; throws NotFoundError when unknown. */
  redeliver(id: string): Promise<WebhookDelivery>;
}

export interface WebhookServiceDeps {
  /** Where deliveries and their attempts are kept, opened by the caller. */
  store: DeliveryStore;
  policy: EgressPolicy;
  /** Current secret first, then the previous one while within 24 h of a rotation; [] when the account is gone. */
  secrets: (accountId: string) => Promise<string[]>;
  clock?: Clock;
  /** Delays before each retry. @default about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h */
  schedule?: readonly number[];
  /** Time allowed for one attempt. @default 15000 */
  timeoutMs?: number;
  /** Time stop() waits for attempts in flight before cutting them off. @default 5000 */
  stopTimeoutMs?: number;
  /** Jitter source, for tests. @default Math.random */
  random?: () => number;
  /** Delay before trying again a delivery whose attempt could not be recorded (a full disk). @default 60000 */
  storeRetryMs?: number;
  /** @default silentLogger */
  log?: Logger;
  /** Told what each recorded attempt led to (the metrics count them). @default none */
  onAttempt?: (outcome: 'delivered' | 'retrying' | 'failed') => void;
  /**
   * Cluster mode: the deliveries are shared with other nodes. Each attempt is reserved in the
   * store first, so one node makes it, and every node looks for due deliveries this often, so
   * a dead node's retries are made by the others. @default none (one node)
   */
  cluster?: { node: string; pollMs: number };
}

const USER_AGENT = 'ScreenshotAppliance-Webhooks/1';
/** Cluster mode: how long past an attempt's time-out its reservation holds before another node may try. */
const RESERVE_MARGIN_MS = 10_000;
/** Cluster mode: due deliveries taken per look. */
const DUE_BATCH = 50;
// setTimeout holds at most 2^31-1 ms; a later due time is re-armed when this fires.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Signed, durable webhook deliveries. Each delivery is written to NeDB before its first
 * attempt, every attempt is recorded, and the next due time is stored, so a restart resumes
 * where the previous process stopped (at-least-once: an attempt cut off by a crash is made
 * again, with the same `webhook-id` so receivers can drop the duplicate).
 */
export function createWebhookService(deps: WebhookServiceDeps): WebhookService {
  const { store } = deps;
  const clock = deps.clock ?? systemClock;
  const schedule = deps.schedule ?? DEFAULT_SCHEDULE_MS;
  const timeoutMs = deps.timeoutMs ?? 15_000;
  const stopTimeoutMs = deps.stopTimeoutMs ?? 5_000;
  const random = deps.random ?? Math.random;
  const storeRetryMs = deps.storeRetryMs ?? 60_000;
  const log = (deps.log ?? silentLogger).child({ component: 'webhooks' });
  // Fresh connections for every attempt: a pooled socket would skip the egress check.
  const agents = { http: new http.Agent({ keepAlive: false }), https: new https.Agent({ keepAlive: false }) };
  const timers = new Map<string, NodeJS.Timeout>();
  const inFlight = new Map<string, Promise<DeliveryDoc | null>>();
  let aborter = new AbortController();
  let stopped = false;
  let poller: NodeJS.Timeout | undefined;

  /** Cluster mode: attempts the due deliveries no node is making (a dead node's retries among them). */
  const attemptDue = async () => {
    for (const doc of await store.due(clock.now(), DUE_BATCH)) {
      if (stopped) return;
      if (!timers.has(doc._id) && !inFlight.has(doc._id)) arm(doc._id, clock.now());
    }
  };

  const arm = (id: string, dueAt: number) => {
    if (stopped) return;
    clearTimeout(timers.get(id));
    const delay = Math.min(Math.max(0, dueAt - clock.now()), MAX_TIMER_MS);
    const timer = setTimeout(() => {
      timers.delete(id);
      if (clock.now() < dueAt) return arm(id, dueAt);
      void attempt(id, false).catch((err) => {
        log.warn({ webhook_id: id, err }, 'the attempt failed to run');
        // Most likely its record could not be stored (a full disk); the delivery is still
        // pending, so it is tried again (receivers drop a repeat by its webhook-id).
        arm(id, clock.now() + storeRetryMs);
      });
    }, delay);
    timer.unref();
    timers.set(id, timer);
  };

  /** One attempt; attempts of the same delivery never overlap. */
  const attempt = (id: string, manual: boolean): Promise<DeliveryDoc | null> => {
    const previous = inFlight.get(id);
    const run = (previous ?? Promise.resolve(null)).catch(() => null).then(() => attemptNow(id, manual));
    const tracked = run.finally(() => {
      if (inFlight.get(id) === tracked) inFlight.delete(id);
    });
    inFlight.set(id, tracked);
    return tracked;
  };

  const attemptNow = async (id: string, manual: boolean): Promise<DeliveryDoc | null> => {
    if (deps.cluster && !manual) {
      const now = clock.now();
      // Another node holds this attempt, or has made it: nothing to do here.
      if (!(await store.reserve(id, deps.cluster.node, now, now + timeoutMs + RESERVE_MARGIN_MS))) return store.get(id);
    }
    const doc = await store.get(id);
    if (!doc || (!manual && doc.status !== 'pending') || (!manual && stopped)) return doc;
    const signal = aborter.signal;
    const started = clock.now();
    const outcome = await deliver(doc, signal);
    // Cut off by stop(): not an answer from the receiver, so the attempt is made again after the restart.
    if (signal.aborted) return doc;
    const record: AttemptRecord = {
      at: started,
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: outcome.durationMs,
      manual,
    };
    const next = nextState(doc, outcome, manual);
    const updated = await store.recordAttempt(id, record, next);
    deps.onAttempt?.(next.status === 'succeeded' ? 'delivered' : next.status === 'pending' ? 'retrying' : 'failed');
    if (next.status === 'pending' && next.next_attempt_at !== null) arm(id, next.next_attempt_at);
    if (next.status === 'failed') log.warn({ webhook_id: id, job_id: doc.job_id }, `the delivery failed: ${outcome.error ?? outcome.statusCode}`);
    return updated;
  };

  const deliver = async (doc: DeliveryDoc, signal: AbortSignal): Promise<AttemptOutcome> => {
    let secrets: string[];
    try {
      secrets = await deps.secrets(doc.account_id);
    } catch (err) {
      const error = `cannot read the webhook secret: ${(err as Error).message}`;
      return { verdict: 'retry', statusCode: null, error, durationMs: 0 };
    }
    if (secrets.length === 0) {
      return { verdict: 'stop', statusCode: null, error: 'the account has no webhook secret (deleted?)', durationMs: 0 };
    }
    const timestamp = Math.floor(clock.now() / 1000);
    return sendWebhook(
      {
        url: doc.url,
        body: doc.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': doc._id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secrets, doc._id, timestamp, doc.body),
        },
      },
      { policy: deps.policy, timeoutMs, agents, signal, now: () => clock.now() },
    );
  };

  const nextState = (doc: DeliveryDoc, outcome: AttemptOutcome, manual: boolean) => {
    const now = clock.now();
    const scheduled = doc.scheduled_attempts + (manual ? 0 : 1);
    const end = (status: 'succeeded' | 'failed') => ({
      status,
      next_attempt_at: null,
      completed_at: now,
      scheduled_attempts: scheduled,
    });
    if (outcome.verdict === 'success') return end('succeeded');
    if (outcome.verdict === 'stop') return end('failed');
    // A manual try of a finished delivery is a single try; of a pending one, the schedule goes on.
    if (manual) {
      return doc.status === 'pending' && doc.next_attempt_at !== null
        ? { status: 'pending' as const, next_attempt_at: doc.next_attempt_at, completed_at: null, scheduled_attempts: scheduled }
        : end('failed');
    }
    const delay = retryDelay(scheduled, schedule, parseRetryAfter(outcome.retryAfter, now), random);
    if (delay === null) return end('failed');
    return { status: 'pending' as const, next_attempt_at: now + delay, completed_at: null, scheduled_attempts: scheduled };
  };

  return {
    async notify(job, type, data) {
      const { page_source: _omitted, ...resource } = data;
      const now = clock.now();
      const doc: DeliveryDoc = {
        _id: deliveryId(job.job_id, type),
        job_id: job.job_id,
        account_id: job.account_id,
        url: job.callback_url,
        type,
        body: JSON.stringify({ type, timestamp: new Date(now).toISOString(), data: resource }),
        status: 'pending',
        attempts: [],
        scheduled_attempts: 0,
        next_attempt_at: now,
        created_at: now,
        completed_at: null,
      };
      // Stored already: its attempts are armed where it was stored, or by start() or the poller.
      if (await store.insert(doc)) arm(doc._id, now);
    },

    async start() {
      stopped = false;
      aborter = new AbortController();
      if (deps.cluster) {
        // Every node looks for due deliveries; a reservation decides which one makes each attempt.
        poller = setInterval(() => void attemptDue().catch((err: unknown) => log.warn({ err }, 'could not read the due deliveries')), deps.cluster.pollMs);
        poller.unref();
        return;
      }
      const pending = await store.pending();
      for (const doc of pending) arm(doc._id, doc.next_attempt_at ?? clock.now());
      if (pending.length > 0) log.info(`resuming ${pending.length} pending deliver${pending.length === 1 ? 'y' : 'ies'}`);
    },

    async stop() {
      stopped = true;
      clearInterval(poller);
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      const running = Promise.allSettled([...inFlight.values()]);
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        running.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), stopTimeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (!waited) {
        aborter.abort();
        await running;
      }
      agents.http.destroy();
      agents.https.destroy();
    },

    async list(filter) {
      const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
      return (await store.list({ job_id: filter.job_id, limit })).map(deliveryView);
    },

    async redeliver(id) {
      if (!(await store.get(id))) throw new NotFoundError('webhook delivery', id);
      const doc = await attempt(id, true);
      if (!doc) throw new NotFoundError('webhook delivery', id);
      return deliveryView(doc);
    },
  };
}

/** The delivery of a job's event: the same id each time, so the receiver and the store see one. */
function deliveryId(jobId: string, type: EventType): string {
  return `msg_${createHash('sha256').update(`${jobId}\n${type}`).digest('hex').slice(0, 32)}`;
}
