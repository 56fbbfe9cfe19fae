import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

import type { EngineEvents } from '../capture/engine-events.js';
import { WARNING_CODES } from '../capture/outputs/capture-warnings.js';
import { EgressDeniedError } from '../egress/policy.js';
import { classifyFailure, FAILURE_CLASSES } from '../jobs/job-failure.js';
import type { DeliveryStatus } from '../store/records/delivery-record.js';
import type { JobRecord } from '../store/records/job-record.js';

/** What the metrics read from the running services when they are scraped. */
export interface MetricsSources {
  /** Jobs waiting in the queue and captures running. */
  queue(): { pending: number; running: number };
  /** Browser processes and how many are up. */
  browsers(): { total: number; ready: number };
  /** Stored webhook deliveries by state, as the store keeps them. */
  webhookDeliveries(): Promise<Record<DeliveryStatus, number>>;
}

const WEBHOOK_OUTCOMES = ['delivered', 'retrying', 'failed'] as const;
/** What a webhook attempt led to: delivered, another attempt scheduled, or no attempt left. */
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** Seconds; a capture takes 1–5 s, a heavy full page up to the 30 s time-outs and their retry. */
const CAPTURE_BUCKETS = [0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 45, 60, 90];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Seconds; an object of a few hundred KB on a LAN store takes milliseconds, a large upload over the internet seconds. */
const STORAGE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The service's metrics in a registry of its own (several servers may run in one process, as
 * the tests do). Counters are fed by the seams the services already have: a job's end
 * (EndWriteBehind.onEnded), a failure's class (JobRunner), the HTTP chain (app.ts) and the lines the
 * engine and the egress proxy log (tap()); gauges read the services when scraped.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private sources: MetricsSources | undefined;
  private readonly jobsEnded: Counter<'status'>;
  private readonly jobsFailed: Counter<'failure_class'>;
  private readonly captureSeconds: Histogram<'preset' | 'full_page'>;
  private readonly captureWarnings: Counter<'code'>;
  private readonly browserRestarts: Counter<'reason'>;
  private readonly browserKills: Counter;
  private readonly captureCrashes: Counter;
  private readonly memoryKills: Counter;
  private readonly egressDenials: Counter<'reason'>;
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpSeconds: Histogram<'route'>;
  private readonly rateLimited: Counter<'route'>;
  private readonly resultCache: Counter<'result'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly storageSeconds: Histogram<'operation'>;
  private readonly storageErrors: Counter<'operation'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    new Gauge({
      name: 'screenshot_queue_depth',
      help: 'Jobs waiting in the queue for a capture slot',
      registers,
      collect() {
        this.set(self.sources?.queue().pending ?? 0);
      },
    });
    new Gauge({
      name: 'screenshot_jobs_running',
      help: 'Captures running now',
      registers,
      collect() {
        this.set(self.sources?.queue().running ?? 0);
      },
    });
    new Gauge({
      name: 'screenshot_browsers',
      help: 'Browser processes the captures are shared among',
      registers,
      collect() {
        this.set(self.sources?.browsers().total ?? 0);
      },
    });
    new Gauge({
      name: 'screenshot_browsers_up',
      help: 'Browser processes up and taking captures',
      registers,
      collect() {
        this.set(self.sources?.browsers().ready ?? 0);
      },
    });
    new Gauge({
      name: 'screenshot_webhook_deliveries',
      help: 'Stored webhook deliveries by state: pending (waiting for an attempt), delivered, failed (every attempt used)',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await self.sources?.webhookDeliveries();
        // The store says `succeeded`; the metric has always said `delivered`.
        this.set({ state: 'pending' }, counts?.pending ?? 0);
        this.set({ state: 'delivered' }, counts?.succeeded ?? 0);
        this.set({ state: 'failed' }, counts?.failed ?? 0);
      },
    });
    this.jobsEnded = new Counter({
      name: 'screenshot_jobs_ended_total',
      help: 'Jobs that ended, by end state (counted once the end is stored)',
      labelNames: ['status'],
      registers,
    });
    this.jobsFailed = new Counter({
      name: 'screenshot_jobs_failed_total',
      help: 'Failed jobs by the class of their failure',
      labelNames: ['failure_class'],
      registers,
    });
    this.captureSeconds = new Histogram({
      name: 'screenshot_capture_duration_seconds',
      help: 'Time from a job starting to its image being stored, completed jobs, by preset and full page',
      labelNames: ['preset', 'full_page'],
      buckets: CAPTURE_BUCKETS,
      registers,
    });
    this.captureWarnings = new Counter({
      name: 'screenshot_capture_warnings_total',
      help: 'Warnings of completed jobs (blank picture, images or fonts not loaded, overlay, cut, HTTP error, console errors, network busy), by code',
      labelNames: ['code'],
      registers,
    });
    this.browserRestarts = new Counter({
      name: 'screenshot_browser_restarts_total',
      help: 'Browsers started to replace another: recycled after its captures, or exited (crashed or killed)',
      labelNames: ['reason'],
      registers,
    });
    this.browserKills = new Counter({
      name: 'screenshot_browser_hung_kills_total',
      help: 'Browsers the engine killed because they stopped answering',
      registers,
    });
    this.captureCrashes = new Counter({
      name: 'screenshot_capture_crashes_total',
      help: 'Capture tries cut short by a crashed browser or page renderer (the first is retried)',
      registers,
    });
    this.memoryKills = new Counter({
      name: 'screenshot_page_memory_kills_total',
      help: 'Page renderers the memory guard stopped for using more than SCREENSHOT_PAGE_MEMORY_MB',
      registers,
    });
    this.egressDenials = new Counter({
      name: 'screenshot_egress_denials_total',
      help: 'Targets the egress policy refused (a job\'s address, or a page\'s request at the proxy), by the kind of address',
      labelNames: ['reason'],
      registers,
    });
    this.httpRequests = new Counter({
      name: 'screenshot_http_requests_total',
      help: 'HTTP requests answered, by method, route (the router pattern, not the address) and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpSeconds = new Histogram({
      name: 'screenshot_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route',
      labelNames: ['route'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.rateLimited = new Counter({
      name: 'screenshot_rate_limit_refusals_total',
      help: 'Requests refused with 429 (requests per second, daily or monthly limit, image rate), by route',
      labelNames: ['route'],
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'screenshot_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retrying (another attempt is scheduled), failed (no attempt left, 410, or refused by the egress policy)',
      labelNames: ['outcome'],
      registers,
    });
    this.resultCache = new Counter({
      name: 'screenshot_result_cache_total',
      help: 'Jobs asked for with a cache_ttl (render links, POST with cache_ttl): served from the cache (hit) or captured (miss)',
      labelNames: ['result'],
      registers,
    });
    this.storageSeconds = new Histogram({
      name: 'screenshot_storage_operation_duration_seconds',
      help: 'Time of each object storage operation (--files s3://…), its retries included, by operation (PutObject, GetObject, HeadObject, DeleteObjects, HeadBucket, the parts of a multipart upload)',
      labelNames: ['operation'],
      buckets: STORAGE_BUCKETS,
      registers,
    });
    this.storageErrors = new Counter({
      name: 'screenshot_storage_errors_total',
      help: 'Object storage operations that failed after their retries (refused, or no answer), by operation; an object that is not there is no error',
      labelNames: ['operation'],
      registers,
    });
    for (const result of ['hit', 'miss']) this.resultCache.inc({ result }, 0);
    for (const outcome of WEBHOOK_OUTCOMES) this.webhookAttempts.inc({ outcome }, 0);
    for (const status of ['completed', 'failed']) this.jobsEnded.inc({ status }, 0);
    for (const failure_class of FAILURE_CLASSES) this.jobsFailed.inc({ failure_class }, 0);
    for (const reason of ['recycled', 'exited']) this.browserRestarts.inc({ reason }, 0);
    for (const code of WARNING_CODES) this.captureWarnings.inc({ code }, 0);
  }

  /** Where the gauges read from; set once the services exist. */
  watch(sources: MetricsSources): void {
    this.sources = sources;
  }

  /**
   * The engine's events, counted: its relaunches (chromium-engine.ts), its kills of a hung
   * browser and the memory guard's kills (page-memory-guard.ts). test/ops/metrics-events.test.ts
   * causes each for real.
   */
  readonly engineEvents: EngineEvents = {
    browserStarting: (reason) => this.browserRestarts.inc({ reason }),
    browserKilled: () => this.browserKills.inc(),
    rendererKilled: () => this.memoryKills.inc(),
  };

  /** The egress proxy refused a page's request (a job's own address is counted by jobFailed). */
  egressDenied(denial: EgressDeniedError): void {
    this.egressDenials.inc({ reason: denial.kind });
  }

  /** JobRun: a capture tried again after its browser crashed. */
  captureRetried(): void {
    this.captureCrashes.inc();
  }

  /** WebhookService: one attempt recorded, and what it leads to. */
  webhookAttempt(outcome: WebhookOutcome): void {
    this.webhookAttempts.inc({ outcome });
  }

  /** The files store in object storage: one operation, its time, and whether it failed. */
  storageOperation(operation: string, seconds: number, failed: boolean): void {
    this.storageSeconds.observe({ operation }, seconds);
    if (failed) this.storageErrors.inc({ operation });
  }

  /** A job asked for with a cache_ttl: served from the cache or not. */
  cacheLookup(hit: boolean): void {
    this.resultCache.inc({ result: hit ? 'hit' : 'miss' });
  }

  /** EndWriteBehind.onEnded: a job's end once stored. */
  jobEnded(job: JobRecord): void {
    this.jobsEnded.inc({ status: job.status });
    if (job.status === 'completed' && typeof job.duration_ms === 'number') {
      this.captureSeconds.observe({ preset: job.preset, full_page: String(job.full_page) }, job.duration_ms / 1000);
    }
    for (const warning of job.warnings ?? []) this.captureWarnings.inc({ code: warning.code });
  }

  /** JobRunner: why a job failed. */
  jobFailed(err: unknown, signal: AbortSignal): void {
    const kind = classifyFailure(err, signal).label;
    this.jobsFailed.inc({ failure_class: kind });
    if (kind === 'page_crashed' || kind === 'browser_crashed') this.captureCrashes.inc();
    // A job's own address is checked before the browser opens it, so the proxy never logs it.
    if (err instanceof EgressDeniedError) this.egressDenied(err);
  }

  /** One answered request; `route` is a pattern (never an address holding ids or image names). */
  request(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpSeconds.observe({ route }, seconds);
    if (status === 429) this.rateLimited.inc({ route });
  }

  /** The Prometheus text exposition of every metric. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
