import crypto from 'node:crypto';

import { type DeviceName, PRESETS } from '../capture/presets.js';
import { ApiError, notFound } from '../errors.js';
import type { SettingsService } from '../settings.js';
import type { Store } from '../store/datastores.js';
import type { Clock } from '../time.js';
import type { JobEnds } from './job-ends.js';
import { secretNames } from './job-options.js';
import type { CreateParams, JobRecord, JobStatus } from './job-record.js';
import type { JobRunner, QueueStats } from './job-runner.js';
import { CacheTurns, resultCacheKey } from './result-cache.js';
import type { SecretBox } from './secret-box.js';

export type { QueueStats, UrlGuard } from './job-runner.js';

export interface JobServiceDeps {
  store: Store;
  clock: Clock;
  /** Runs the jobs this service creates. */
  runner: JobRunner;
  /** Ends of jobs not stored yet (a full disk), which readers see all the same. */
  ends: JobEnds;
  /** Its `queue_limit`: most jobs waiting or running before a request is refused with 503. */
  settings: SettingsService;
  /** Seals the secrets of a job's options until it ends. */
  secrets: SecretBox;
}

const HOUR = 3_600_000;
/** How far back the job list looks at a time, widening until a page is full. */
const LIST_WINDOWS = [HOUR, 24 * HOUR, 7 * 24 * HOUR, 30 * 24 * HOUR, Infinity];

const newJobId = () => `job_${crypto.randomBytes(12).toString('hex')}`;

/** A job a request got: made for it, or (`cached`) an identical earlier one served from the cache. */
export interface RequestedJob {
  job: JobRecord;
  cached: boolean;
}

/** Charges the account for `count` new jobs around their creation (QuotaService.chargeFor). */
export type Charge = (count: number, create: () => Promise<JobRecord[]>) => Promise<JobRecord[]>;

/**
 * Screenshot jobs as requests see them: room in the queue (back-pressure), creation, and
 * queries. Running them is the JobRunner's.
 */
export class JobService {
  /** Slots promised to requests between the capacity check and their insert. */
  private reserved = 0;
  private readonly cacheTurns = new CacheTurns();
  /** Who waits for which job to end (render links). */
  private readonly waiting = new Map<string, Set<(job: JobRecord) => void>>();

  constructor(private readonly deps: JobServiceDeps) {}

  /**
   * Holds queue room for `count` jobs, or throws 503 when the queue is full. The caller
   * must call the returned release once its jobs are inserted (or refused).
   */
  holdCapacity(count: number): () => void {
    const limit = this.deps.settings.get().queue_limit;
    if (this.deps.runner.isStopping()) {
      throw new ApiError(503, 'The service is shutting down; try again shortly', 'Service unavailable', {}, { 'Retry-After': '5' });
    }
    if (this.deps.runner.depth() + this.reserved + count > limit) {
      const wait = Math.max(1, this.estimateSeconds(0));
      throw new ApiError(
        503,
        `The capture queue is full (${limit} jobs); try again in about ${wait} seconds`,
        'Service unavailable',
        {},
        { 'Retry-After': String(wait) },
      );
    }
    this.reserved += count;
    let released = false;
    return () => {
      if (!released) this.reserved -= count;
      released = true;
    };
  }

  /** Seconds until the last of `count` newly queued jobs of this kind should be done. */
  estimateSeconds(count: number, kind: { fullPage: boolean; delayMs: number } = { fullPage: false, delayMs: 0 }): number {
    return this.deps.runner.estimateSeconds(count, kind);
  }

  /**
   * The jobs of a request, one per device, charged through `charge`. With `cache_ttl` a device
   * whose identical result completed within that many seconds, or is being captured now, gets
   * that job (`cached`), without a new capture and without a charge; the others are created.
   */
  async request(accountId: string, keyId: string, params: CreateParams, baseUrl: string, charge: Charge): Promise<RequestedJob[]> {
    // Room in the queue is asked only for jobs to be made: a cached result is served even when the queue is full.
    const make = async (devices: DeviceName[], cacheKeys?: string[]) => {
      const release = this.holdCapacity(devices.length);
      try {
        return await charge(devices.length, () => this.create(accountId, keyId, { ...params, devices }, baseUrl, cacheKeys));
      } finally {
        release();
      }
    };
    if (params.cache_ttl <= 0) return (await make(params.devices)).map((job) => ({ job, cached: false }));
    return this.cacheTurns.run(async () => {
      const since = this.deps.clock.now() - params.cache_ttl * 1000;
      const keys = params.devices.map((device) => resultCacheKey(accountId, params, device, (text) => this.deps.secrets.digest(text)));
      const found = await Promise.all(keys.map((key) => this.findCached(key, since)));
      const missing = params.devices.filter((_, i) => !found[i]);
      const created = missing.length ? await make(missing, keys.filter((_, i) => !found[i])) : [];
      return found.map((job) => (job ? { job, cached: true } : { job: created.shift()!, cached: false }));
    });
  }

  /** The newest job of this cache key that completed since `since` and still has its image, or is still under way. */
  private async findCached(cacheKey: string, since: number): Promise<JobRecord | null> {
    const candidates = (await this.deps.store.find({ cache_key: cacheKey }).sort({ created_at: -1 }).limit(20)) as JobRecord[];
    for (const stored of candidates) {
      const job = this.deps.ends.overlay(stored)!;
      if (job.status === 'pending' || job.status === 'processing') return job;
      if (job.status === 'completed' && !job.expired && job.image_file && (job.completed_at ?? 0) >= since) return job;
    }
    return null;
  }

  /**
   * The job once it has ended (completed or failed), or as it is after `timeoutMs`, whichever
   * comes first; null when there is no such job.
   */
  async waitForEnd(jobId: string, timeoutMs: number): Promise<JobRecord | null> {
    const ended = (job: JobRecord | null) => !job || job.status === 'completed' || job.status === 'failed';
    let listener: ((job: JobRecord) => void) | undefined;
    const announced = new Promise<JobRecord>((resolve) => {
      listener = resolve;
      const set = this.waiting.get(jobId) ?? new Set();
      set.add(resolve);
      this.waiting.set(jobId, set);
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      // Read after listening, so an end between the two is not missed.
      const current = await this.find(jobId);
      if (ended(current)) return current;
      const timedOut = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), Math.max(0, timeoutMs));
      });
      return (await Promise.race([announced, timedOut])) ?? (await this.find(jobId));
    } finally {
      clearTimeout(timer);
      const set = this.waiting.get(jobId);
      set?.delete(listener!);
      if (set?.size === 0) this.waiting.delete(jobId);
    }
  }

  /** Called once a job's end is stored: wakes those waiting for it. */
  ended(job: JobRecord): void {
    for (const wake of this.waiting.get(job._id) ?? []) wake(job);
  }

  /** Creates and queues one job per device (`cacheKeys`, when given, in the same order). */
  async create(accountId: string, keyId: string, params: CreateParams, baseUrl: string, cacheKeys?: string[]): Promise<JobRecord[]> {
    const now = this.deps.clock.now();
    const batch = newJobId().replace('job_', 'batch_');
    const jobs: JobRecord[] = [];
    for (const [i, device] of params.devices.entries()) {
      const job: JobRecord = {
        _id: newJobId(),
        account_id: accountId,
        key_id: keyId,
        batch_id: batch,
        url: params.url,
        device,
        preset: PRESETS[device].name,
        full_page: params.full_page,
        googlebot: params.googlebot,
        viewport:
          params.width !== null || params.height !== null
            ? { width: params.width ?? PRESETS[device].width, height: params.height ?? PRESETS[device].height }
            : null,
        format: params.format,
        quality: params.quality,
        callback_url: params.callback_url,
        base_url: baseUrl,
        status: 'pending',
        progress: 0,
        created_at: now,
        started_at: null,
        completed_at: null,
        error: null,
        image_file: null,
        has_page_source: false,
        truncated: false,
        blocked_requests: 0,
        attempts: 0,
        duration_ms: null,
        expired: false,
        options: params.options,
        sealed_secrets: params.secrets ? this.deps.secrets.seal(params.secrets) : null,
        secret_names: secretNames(params.secrets),
        ...(cacheKeys ? { cache_key: cacheKeys[i] } : {}),
      };
      jobs.push(job);
    }
    await this.deps.store.insert(jobs);
    for (const job of jobs) this.deps.runner.enqueue(job._id, job.full_page);
    return jobs;
  }

  /** A job of this account, or 404 — also for another account's job, so ids reveal nothing. */
  async getOwned(accountId: string, jobId: string): Promise<JobRecord> {
    const job = await this.find(jobId);
    if (!job || job.account_id !== accountId) throw notFound(`No screenshot job ${jobId}`);
    return job;
  }

  async find(jobId: string): Promise<JobRecord | null> {
    if (typeof jobId !== 'string' || jobId.length > 64) return null;
    return this.deps.ends.overlay((await this.deps.store.findOne({ _id: jobId })) as JobRecord | null);
  }

  async findByImage(imageFile: string): Promise<JobRecord | null> {
    return this.deps.ends.overlay((await this.deps.store.findOne({ image_file: imageFile })) as JobRecord | null);
  }

  /**
   * Job history, newest first, for the admin. Read in widening windows of creation time (the
   * last hour, day, week, month, then all), each a range of the created_at index, so a page of
   * the newest jobs costs what the last hours hold rather than a sort of the whole history.
   */
  async list(filter: { status?: JobStatus; account_id?: string; before?: string; limit: number }): Promise<JobRecord[]> {
    const cursor = filter.before ? await this.find(filter.before) : null;
    const upper = cursor ? cursor.created_at : Infinity;
    const wanted = (job: JobRecord) =>
      (!filter.status || job.status === filter.status) &&
      (!filter.account_id || job.account_id === filter.account_id) &&
      (!cursor || job.created_at < cursor.created_at || (job.created_at === cursor.created_at && job._id < cursor._id));
    const end = Number.isFinite(upper) ? upper : Math.max(this.deps.clock.now(), 0);
    for (const span of LIST_WINDOWS) {
      const range: Record<string, number> = {};
      if (Number.isFinite(span)) range.$gte = end - span;
      if (Number.isFinite(upper)) range.$lte = upper;
      const query = Object.keys(range).length ? { created_at: range } : {};
      const found = ((await this.deps.store.find(query)) as JobRecord[]).filter(wanted);
      if (found.length < filter.limit && Number.isFinite(span)) continue;
      found.sort((a, b) => b.created_at - a.created_at || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0));
      return found.slice(0, filter.limit).map((job) => this.deps.ends.overlay(job)!);
    }
    return [];
  }

  /** Jobs ended per hour over the last `hours` hours, oldest first. */
  async hourly(hours: number): Promise<Array<{ hour: number; completed: number; failed: number }>> {
    const now = this.deps.clock.now();
    const first = Math.floor(now / 3_600_000) * 3_600_000 - (hours - 1) * 3_600_000;
    const rows = Array.from({ length: hours }, (_, i) => ({ hour: first + i * 3_600_000, completed: 0, failed: 0 }));
    const ended = (await this.deps.store.find({ completed_at: { $gte: first } })) as JobRecord[];
    for (const job of ended) {
      const row = rows[Math.floor(((job.completed_at ?? 0) - first) / 3_600_000)];
      if (row && (job.status === 'completed' || job.status === 'failed')) row[job.status]++;
    }
    return rows;
  }

  // The queue as the admin routes reach it; they take JobService for now.
  stats(): QueueStats {
    return this.deps.runner.stats();
  }

  pause(): void {
    this.deps.runner.pause();
  }

  resume(): void {
    this.deps.runner.resume();
  }
}
