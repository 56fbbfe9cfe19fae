import crypto from 'node:crypto';
import PQueue from 'p-queue';
import { BrowserCrashedError, CaptureError, type CaptureEngine, type CaptureResult } from '../capture/engine.js';
import { PRESETS } from '../capture/presets.js';
import { ApiError, notFound } from '../errors.js';
import type { SettingsService } from '../settings.js';
import type { Store } from '../store/datastores.js';
import type { FileStore } from '../store/file-store.js';
import type { Clock } from '../time.js';
import { failureMessage } from './failure-message.js';
import type { CreateParams, JobRecord, JobStatus } from './job-record.js';

/** Decides whether the service may reach a URL; throws with the reason when not. */
export interface UrlGuard {
  checkUrl(url: string): Promise<unknown>;
}

export interface JobServiceDeps {
  store: Store;
  files: FileStore;
  engine: CaptureEngine;
  settings: SettingsService;
  clock: Clock;
  log: (line: string) => void;
  guard?: UrlGuard;
  /** Called once a job has ended (completed or failed), after it is persisted. */
  onEnded?: (job: JobRecord) => void;
  /** Largest page source stored, bytes. */
  pageSourceMaxBytes: number;
}

export interface QueueStats {
  pending: number;
  running: number;
  concurrency: number;
  limit: number;
  paused: boolean;
}

/** Mean capture time assumed before any capture was measured. */
const INITIAL_MEAN_MS = 3000;
/** How often a job's end that could not be stored (a full disk) is written again. */
const SAVE_RETRY_MS = 5000;

const newJobId = () => `job_${crypto.randomBytes(12).toString('hex')}`;
/** 144 random bits: the image address is the only thing protecting the image. */
const newImageToken = () => crypto.randomBytes(18).toString('base64url');

class ShutdownAbort extends Error {
  override readonly name = 'ShutdownAbort';
}

/**
 * Screenshot jobs: creation, the capture queue, every state transition persisted before it
 * is visible, recovery of unfinished jobs after a restart, and shutdown that re-queues.
 */
export class JobService {
  private readonly queue: PQueue;
  private readonly running = new Map<string, AbortController>();
  private readonly listeners = new Set<() => void>();
  /** Slots promised to requests between the capacity check and their insert. */
  private reserved = 0;
  private meanCaptureMs = INITIAL_MEAN_MS;
  private stopping = false;
  /**
   * Ends of jobs (completed or failed) that could not be stored yet, by job id. Clients see
   * them at once; they are written, and the job's webhook sent, once the disk takes them.
   */
  private readonly unsaved = new Map<string, Partial<JobRecord>>();
  private saveTimer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;

  constructor(private readonly deps: JobServiceDeps) {
    this.queue = new PQueue({ concurrency: deps.settings.get().concurrency });
    deps.settings.onChange((s) => {
      this.queue.concurrency = s.concurrency;
    });
    this.queue.on('active', () => this.emit());
    this.queue.on('next', () => this.emit());
  }

  /** Jobs waiting or running. */
  depth(): number {
    return this.queue.size + this.queue.pending;
  }

  stats(): QueueStats {
    return {
      pending: this.queue.size,
      running: this.queue.pending,
      concurrency: this.queue.concurrency,
      limit: this.deps.settings.get().queue_limit,
      paused: this.queue.isPaused,
    };
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pause(): void {
    this.queue.pause();
    this.emit();
  }

  resume(): void {
    this.queue.start();
    this.emit();
  }

  /**
   * Holds queue room for `count` jobs, or throws 503 when the queue is full. The caller
   * must call the returned release once its jobs are inserted (or refused).
   */
  holdCapacity(count: number): () => void {
    const limit = this.deps.settings.get().queue_limit;
    if (this.stopping) {
      throw new ApiError(503, 'The service is shutting down; try again shortly', 'Service unavailable', {}, { 'Retry-After': '5' });
    }
    if (this.depth() + this.reserved + count > limit) {
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
      };
      jobs.push(job);
    }
    await this.deps.store.insert(jobs);
    for (const job of jobs) this.enqueue(job._id);
    return jobs;
  }

  /** Seconds until the last of `count` newly queued jobs should be done. */
  estimateSeconds(count: number): number {
    const concurrency = this.queue.concurrency;
    const ahead = this.depth() + Math.max(0, count - 1);
    const rounds = Math.floor(ahead / concurrency) + 1;
    return Math.max(1, Math.ceil((rounds * this.meanCaptureMs) / 1000));
  }

  /** A job of this account, or 404 — also for another account's job, so ids reveal nothing. */
  async getOwned(accountId: string, jobId: string): Promise<JobRecord> {
    const job = await this.find(jobId);
    if (!job || job.account_id !== accountId) throw notFound(`No screenshot job ${jobId}`);
    return job;
  }

  async find(jobId: string): Promise<JobRecord | null> {
    if (typeof jobId !== 'string' || jobId.length > 64) return null;
    return this.withUnsaved((await this.deps.store.findOne({ _id: jobId })) as JobRecord | null);
  }

  async findByImage(imageFile: string): Promise<JobRecord | null> {
    return this.withUnsaved((await this.deps.store.findOne({ image_file: imageFile })) as JobRecord | null);
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
    return jobs.map((job) => this.withUnsaved(job)!);
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

  /** Re-queues every job a previous run left pending or processing, oldest first. */
  async recover(): Promise<number> {
    const unfinished = (await this.deps.store
      .find({ status: { $in: ['pending', 'processing'] } })
      .sort({ created_at: 1 })) as JobRecord[];
    for (const job of unfinished) {
      if (job.status === 'processing') {
        // On a full disk the job stays `processing` on file; run() takes it all the same.
        await this.update(job._id, { status: 'pending', progress: 0 }).catch((err) =>
          this.deps.log(`job ${job._id}: could not set it back to pending: ${String(err)}`),
        );
      }
      this.enqueue(job._id);
    }
    if (unfinished.length) this.deps.log(`re-queued ${unfinished.length} unfinished job(s) from the previous run`);
    return unfinished.length;
  }

  /**
   * Stops taking jobs, gives running captures `graceMs` to finish, then aborts the rest;
   * aborted and waiting jobs stay pending in the store and run again at the next start.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.queue.pause();
    this.queue.clear();
    const idle = this.queue.onPendingZero();
    const timer = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([idle, timer]);
    for (const controller of this.running.values()) controller.abort(new ShutdownAbort('shutting down'));
    await Promise.race([this.queue.onPendingZero(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    clearTimeout(this.saveTimer);
    await this.saveUnsaved();
    if (this.unsaved.size) {
      this.deps.log(`${this.unsaved.size} job end(s) could not be stored (disk full?); those jobs run again at the next start`);
    }
  }

  private enqueue(jobId: string): void {
    void this.queue.add(() => this.run(jobId)).catch((err) => this.deps.log(`job ${jobId}: ${String(err)}`));
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  private async update(jobId: string, set: Partial<JobRecord>): Promise<void> {
    await this.deps.store.update({ _id: jobId }, { $set: set });
  }

  private async run(jobId: string): Promise<void> {
    const job = await this.find(jobId);
    // `processing` here is a job recover() could not set back to pending (a full disk).
    if (!job || (job.status !== 'pending' && job.status !== 'processing') || this.running.has(jobId) || this.stopping) return;
    const settings = this.deps.settings.get();
    const controller = new AbortController();
    this.running.set(jobId, controller);
    // A last line of defence; the engine bounds every step on its own.
    const deadline = setTimeout(
      () => controller.abort(new CaptureError('The capture took too long and was stopped')),
      settings.navigation_timeout_ms + settings.capture_timeout_ms + 30_000,
    );
    const started = this.deps.clock.now();
    let attempts = job.attempts;
    let imageFile: string | undefined;
    let hasSource = false;
    try {
      await this.update(jobId, { status: 'processing', progress: 10, started_at: started });
      this.emit();
      if (this.deps.guard) await this.deps.guard.checkUrl(job.url);
      let result: CaptureResult | undefined;
      for (;;) {
        attempts++;
        await this.update(jobId, { attempts });
        try {
          result = await this.capture(job, controller.signal);
          break;
        } catch (err) {
          // A crashed browser is relaunched by the engine; the job gets one more try.
          if (err instanceof BrowserCrashedError && attempts - job.attempts < 2 && !controller.signal.aborted) {
            this.deps.log(`job ${jobId}: browser crashed, retrying once`);
            continue;
          }
          throw err;
        }
      }
      const fileName = `${newImageToken()}.${result.format === 'jpeg' ? 'jpg' : result.format}`;
      await this.deps.files.writeImage(fileName, result.image);
      imageFile = fileName;
      if (result.html !== null && Buffer.byteLength(result.html) <= this.deps.pageSourceMaxBytes) {
        hasSource = true;
        await this.deps.files.writeSource(jobId, result.html);
      }
      await this.update(jobId, { progress: 90 });
      const ended = this.deps.clock.now();
      this.meanCaptureMs = this.meanCaptureMs * 0.8 + (ended - started) * 0.2;
      await this.update(jobId, {
        status: 'completed',
        progress: 100,
        completed_at: ended,
        duration_ms: ended - started,
        image_file: fileName,
        has_page_source: hasSource,
        truncated: result.truncated,
        blocked_requests: result.blockedRequests,
      });
    } catch (err) {
      // A job that did not complete keeps no files (the image may be whole while its job could not be stored).
      if (imageFile || hasSource) {
        await this.deps.files.remove(imageFile, jobId).catch((e) => this.deps.log(`job ${jobId}: could not remove its files: ${String(e)}`));
      }
      if (controller.signal.reason instanceof ShutdownAbort) {
        await this.update(jobId, { status: 'pending', progress: 0, attempts: job.attempts });
        return;
      }
      const message = failureMessage(err, controller.signal);
      if (message === 'The capture failed unexpectedly' || message.startsWith('Could not store')) {
        this.deps.log(`job ${jobId} failed: ${(err as Error)?.stack ?? String(err)}`);
      }
      const ended = this.deps.clock.now();
      await this.saveEnd(jobId, {
        status: 'failed',
        progress: 0,
        completed_at: ended,
        duration_ms: ended - started,
        error: message,
      });
    } finally {
      clearTimeout(deadline);
      this.running.delete(jobId);
      this.emit();
    }
    if (!this.unsaved.has(jobId)) await this.announceEnd(jobId);
  }

  /** Stores a job's end; when the disk refuses it, keeps it for clients and writes it later. */
  private async saveEnd(jobId: string, end: Partial<JobRecord>): Promise<void> {
    try {
      await this.update(jobId, end);
    } catch (err) {
      this.deps.log(`job ${jobId}: its end could not be stored (${String(err)}); trying again every ${SAVE_RETRY_MS / 1000} s`);
      this.unsaved.set(jobId, end);
      this.scheduleSave();
    }
  }

  private scheduleSave(): void {
    if (this.saveTimer || this.stopping) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      void this.saveUnsaved().then(() => {
        if (this.unsaved.size) this.scheduleSave();
      });
    }, SAVE_RETRY_MS);
    this.saveTimer.unref();
  }

  /** Writes the ends kept in memory; never rejects (what fails stays for the next try). */
  private saveUnsaved(): Promise<void> {
    this.saving ??= this.writeUnsaved().finally(() => {
      this.saving = undefined;
    });
    return this.saving;
  }

  private async writeUnsaved(): Promise<void> {
    for (const [jobId, end] of this.unsaved) {
      try {
        await this.update(jobId, end);
      } catch {
        return;
      }
      this.unsaved.delete(jobId);
      await this.announceEnd(jobId).catch((err) => this.deps.log(`job ${jobId}: ${String(err)}`));
    }
  }

  private async announceEnd(jobId: string): Promise<void> {
    const ended = await this.find(jobId);
    if (ended && (ended.status === 'completed' || ended.status === 'failed')) this.deps.onEnded?.(ended);
  }

  private withUnsaved(job: JobRecord | null): JobRecord | null {
    const end = job && this.unsaved.get(job._id);
    return end ? { ...job, ...end } : job;
  }

  private capture(job: JobRecord, signal: AbortSignal): Promise<CaptureResult> {
    const settings = this.deps.settings.get();
    return this.deps.engine.capture({
      url: job.url,
      preset: PRESETS[job.device],
      viewport: job.viewport ?? undefined,
      fullPage: job.full_page,
      googlebot: job.googlebot,
      format: job.format,
      quality: job.quality ?? undefined,
      maxHeight: settings.full_page_max_height,
      navigationTimeoutMs: settings.navigation_timeout_ms,
      captureTimeoutMs: settings.capture_timeout_ms,
      maxSourceBytes: this.deps.pageSourceMaxBytes,
      signal,
      // Progress is a hint: one that cannot be stored (a full disk) is simply dropped.
      onProgress: (progress) => {
        this.update(job._id, { progress }).catch(() => undefined);
      },
    });
  }
}
