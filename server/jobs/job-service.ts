import crypto from 'node:crypto';

import { PRESETS } from '../capture/presets.js';
import { ApiError, notFound } from '../errors.js';
import type { SettingsService } from '../settings.js';
import type { Store } from '../store/datastores.js';
import type { Clock } from '../time.js';
import type { JobEnds } from './job-ends.js';
import { secretNames } from './job-options.js';
import type { CreateParams, JobRecord, JobStatus } from './job-record.js';
import type { JobRunner, QueueStats } from './job-runner.js';
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

const newJobId = () => `job_${crypto.randomBytes(12).toString('hex')}`;

/**
 * Screenshot jobs as requests see them: room in the queue (back-pressure), creation, and
 * queries. Running them is the JobRunner's.
 */
export class JobService {
  /** Slots promised to requests between the capacity check and their insert. */
  private reserved = 0;

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

  /** Creates and queues one job per device. */
  async create(accountId: string, keyId: string, params: CreateParams, baseUrl: string): Promise<JobRecord[]> {
    const now = this.deps.clock.now();
    const batch = newJobId().replace('job_', 'batch_');
    const jobs: JobRecord[] = [];
    for (const device of params.devices) {
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

  /** Job history, newest first, for the admin. */
  async list(filter: { status?: JobStatus; account_id?: string; before?: string; limit: number }): Promise<JobRecord[]> {
    const query: Record<string, unknown> = {};
    if (filter.status) query.status = filter.status;
    if (filter.account_id) query.account_id = filter.account_id;
    if (filter.before) {
      const cursor = await this.find(filter.before);
      if (cursor) {
        query.$or = [
          { created_at: { $lt: cursor.created_at } },
          { created_at: cursor.created_at, _id: { $lt: cursor._id } },
        ];
      }
    }
    const jobs = (await this.deps.store.find(query).sort({ created_at: -1, _id: -1 }).limit(filter.limit)) as JobRecord[];
    return jobs.map((job) => this.deps.ends.overlay(job)!);
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
