import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';

import { NotFoundError } from '../domain-errors.js';
import type { NetworkScope } from '../egress/network-scope.js';
import type { EgressPolicy } from '../egress/policy.js';
import { carriedAgentClass, type UpstreamProxy } from '../egress/upstream-proxy.js';
import { type Logger,silentLogger } from '../logger.js';
import type { AttemptRecord, DeliveryDoc, EventType } from '../store/records/delivery-record.js';
import type { DeliveryStore } from '../store/stores.js';
import { type Clock,systemClock } from '../time.js';
import { deliveryView, type WebhookDelivery } from './delivery.js';
import { DEFAULT_SCHEDULE_MS, parseRetryAfter, retryDelay } from './retry-schedule.js';
import { type AttemptOutcome,sendWebhook } from './sender.js';
import { signWebhook } from './signing.js';

export type { WebhookAttempt, WebhookDelivery } from './delivery.js';

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
  /** The network scope of the key a delivery's job belongs to, read at each attempt. @default none: the policy's settings alone */
  scopeOf?: (doc: DeliveryDoc) => Promise<NetworkScope>;
  /** Authorities receivers' certificates may come from: the system's roots and `--ca-file`'s (nodeCa). @default Node's roots */
  ca?: string[];
  /** The company's proxy (`--proxy`), which carries each attempt the policy allowed. @default none: direct */
  upstream?: UpstreamProxy;
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

export function createWebhookService(deps: WebhookServiceDeps): WebhookService {
  return new DurableWebhookService(deps);
}

/**
 * Signed, durable webhook deliveries. Each delivery is written to the delivery store (NeDB or
 * PostgreSQL) before its first attempt, every attempt is recorded, and the next due time is
 * stored, so a restart resumes where the previous process stopped (at-least-once: an attempt cut
 * off by a crash is made again, with the same `webhook-id` so receivers can drop the duplicate).
 */
export class DurableWebhookService implements WebhookService {
  private readonly store: DeliveryStore;
  private readonly clock: Clock;
  private readonly schedule: readonly number[];
  private readonly timeoutMs: number;
  private readonly stopTimeoutMs: number;
  private readonly random: () => number;
  private readonly storeRetryMs: number;
  private readonly log: Logger;
  /** Fresh connections for every attempt: a pooled socket would skip the egress check. */
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Map<string, Promise<DeliveryDoc | null>>();
  private aborter = new AbortController();
  private stopped = false;
  private poller: NodeJS.Timeout | undefined;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.store = deps.store;
    this.clock = deps.clock ?? systemClock;
    this.schedule = deps.schedule ?? DEFAULT_SCHEDULE_MS;
    this.timeoutMs = deps.timeoutMs ?? 15_000;
    this.stopTimeoutMs = deps.stopTimeoutMs ?? 5_000;
    this.random = deps.random ?? Math.random;
    this.storeRetryMs = deps.storeRetryMs ?? 60_000;
    const HttpAgent = carriedAgentClass(http.Agent, deps.upstream, false);
    const HttpsAgent = carriedAgentClass(https.Agent, deps.upstream, true);
    this.agents = { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false, ca: deps.ca }) };
    this.log = (deps.log ?? silentLogger).child({ component: 'webhooks' });
  }

  async notify(job: WebhookJob, type: EventType, data: Record<string, unknown>): Promise<void> {
    const { page_source: _omitted, ...resource } = data;
    const now = this.clock.now();
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
    if (await this.store.insert(doc)) this.arm(doc._id, now);
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.aborter = new AbortController();
    const cluster = this.deps.cluster;
    if (cluster) {
      // Every node looks for due deliveries; a reservation decides which one makes each attempt.
      this.poller = setInterval(
        () => void this.attemptDue().catch((err: unknown) => this.log.warn({ err }, 'could not read the due deliveries')),
        cluster.pollMs,
      );
      this.poller.unref();
      return;
    }
    const pending = await this.store.pending();
    for (const doc of pending) this.arm(doc._id, doc.next_attempt_at ?? this.clock.now());
    if (pending.length > 0) this.log.info(`resuming ${pending.length} pending deliver${pending.length === 1 ? 'y' : 'ies'}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poller);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const running = Promise.allSettled([...this.inFlight.values()]);
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      running.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), this.stopTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!waited) {
      this.aborter.abort();
      await running;
    }
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  async list(filter: { job_id?: string; limit?: number }): Promise<WebhookDelivery[]> {
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
    return (await this.store.list({ job_id: filter.job_id, limit })).map(deliveryView);
  }

  async redeliver(id: string): Promise<WebhookDelivery> {
    if (!(await this.store.get(id))) throw new NotFoundError('webhook delivery', id);
    const doc = await this.attempt(id, true);
    if (!doc) throw new NotFoundError('webhook delivery', id);
    return deliveryView(doc);
  }

  /** Cluster mode: attempts the due deliveries no node is making (a dead node's retries among them). */
  private async attemptDue(): Promise<void> {
    for (const doc of await this.store.due(this.clock.now(), DUE_BATCH)) {
      if (this.stopped) return;
      if (!this.timers.has(doc._id) && !this.inFlight.has(doc._id)) this.arm(doc._id, this.clock.now());
    }
  }

  private arm(id: string, dueAt: number): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(id));
    const delay = Math.min(Math.max(0, dueAt - this.clock.now()), MAX_TIMER_MS);
    const timer = setTimeout(() => {
      this.timers.delete(id);
      if (this.clock.now() < dueAt) return this.arm(id, dueAt);
      void this.attempt(id, false).catch((err) => {
        this.log.warn({ webhook_id: id, err }, 'the attempt failed to run');
        // Most likely its record could not be stored (a full disk); the delivery is still
        // pending, so it is tried again (receivers drop a repeat by its webhook-id).
        this.arm(id, this.clock.now() + this.storeRetryMs);
      });
    }, delay);
    timer.unref();
    this.timers.set(id, timer);
  }

  /** One attempt; attempts of the same delivery never overlap. */
  private attempt(id: string, manual: boolean): Promise<DeliveryDoc | null> {
    const previous = this.inFlight.get(id);
    const run = (previous ?? Promise.resolve(null)).catch(() => null).then(() => this.attemptNow(id, manual));
    const tracked = run.finally(() => {
      if (this.inFlight.get(id) === tracked) this.inFlight.delete(id);
    });
    this.inFlight.set(id, tracked);
    return tracked;
  }

  private async attemptNow(id: string, manual: boolean): Promise<DeliveryDoc | null> {
    const { store, clock } = this;
    const cluster = this.deps.cluster;
    if (cluster && !manual) {
      const now = clock.now();
      // Another node holds this attempt, or has made it: nothing to do here.
      if (!(await store.reserve(id, cluster.node, now, now + this.timeoutMs + RESERVE_MARGIN_MS))) return store.get(id);
    }
    const doc = await store.get(id);
    if (!doc || (!manual && doc.status !== 'pending') || (!manual && this.stopped)) return doc;
    const signal = this.aborter.signal;
    const started = clock.now();
    const outcome = await this.deliver(doc, signal);
    // Cut off by stop(): not an answer from the receiver, so the attempt is made again after the restart.
    if (signal.aborted) return doc;
    const record: AttemptRecord = {
      at: started,
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: outcome.durationMs,
      manual,
    };
    const next = this.nextState(doc, outcome, manual);
    const updated = await store.recordAttempt(id, record, next);
    this.deps.onAttempt?.(next.status === 'succeeded' ? 'delivered' : next.status === 'pending' ? 'retrying' : 'failed');
    if (next.status === 'pending' && next.next_attempt_at !== null) this.arm(id, next.next_attempt_at);
    if (next.status === 'failed') this.log.warn({ webhook_id: id, job_id: doc.job_id }, `the delivery failed: ${outcome.error ?? outcome.statusCode}`);
    return updated;
  }

  private async deliver(doc: DeliveryDoc, signal: AbortSignal): Promise<AttemptOutcome> {
    let secrets: string[];
    let scope: NetworkScope | undefined;
    try {
      secrets = await this.deps.secrets(doc.account_id);
      scope = await this.deps.scopeOf?.(doc);
    } catch (err) {
      const error = `cannot read the webhook secret or the key's network scope: ${(err as Error).message}`;
      return { verdict: 'retry', statusCode: null, error, durationMs: 0 };
    }
    if (secrets.length === 0) {
      return { verdict: 'stop', statusCode: null, error: 'the account has no webhook secret (deleted?)', durationMs: 0 };
    }
    const timestamp = Math.floor(this.clock.now() / 1000);
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
      { policy: this.deps.policy, scope, timeoutMs: this.timeoutMs, agents: this.agents, signal, now: () => this.clock.now() },
    );
  }

  /** The delivery's state after an attempt: done, failed, or pending with its next due time. */
  private nextState(doc: DeliveryDoc, outcome: AttemptOutcome, manual: boolean) {
    const now = this.clock.now();
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
    const delay = retryDelay(scheduled, this.schedule, parseRetryAfter(outcome.retryAfter, now), this.random);
    if (delay === null) return end('failed');
    return { status: 'pending' as const, next_attempt_at: now + delay, completed_at: null, scheduled_attempts: scheduled };
  }
}

/** The delivery of a job's event: the same id each time, so the receiver and the store see one. */
function deliveryId(jobId: string, type: EventType): string {
  return `msg_${createHash('sha256').update(`${jobId}\n${type}`).digest('hex').slice(0, 32)}`;
}
