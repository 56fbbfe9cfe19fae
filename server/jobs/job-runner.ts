import crypto from 'node:crypto';

import PQueue from 'p-queue';

import { BrowserCrashedError, type CaptureEngine, CaptureError, type CaptureResult } from '../capture/engine.js';
import { PRESETS } from '../capture/presets.js';
import type { Logger } from '../logger.js';
import type { SettingsService } from '../settings.js';
import type { FileStore } from '../store/file-store.js';
import type { JobChange, JobStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import { describeFailure } from './failure-message.js';
import type { JobEnds } from './job-ends.js';
import type { JobSecrets } from './job-options.js';
import type { JobRecord } from './job-record.js';
import type { SecretBox } from './secret-box.js';

/** Decides whether the service may reach a URL; throws with the reason when not. */
export interface UrlGuard {
  checkUrl(url: string): Promise<unknown>;
}

export interface JobRunnerDeps {
  store: JobStore;
  files: FileStore;
  engine: CaptureEngine;
  settings: SettingsService;
  clock: Clock;
  log: Logger;
  ends: JobEnds;
  guard?: UrlGuard;
  /** Largest page source stored, bytes. */
  pageSourceMaxBytes: number;
  /** Told why each job failed (the metrics count failures by class). @default none */
  onFailed?: (err: unknown, signal: AbortSignal) => void;
  /** Opens the sealed secrets of a job's options. */
  secrets: SecretBox;
}

export interface QueueStats {
  pending: number;
  running: number;
  concurrency: number;
  limit: number;
  paused: boolean;
}

/** Mean capture time assumed before any capture was measured: a viewport, and a full page. */
const INITIAL_MEAN_MS = 3000;
const INITIAL_FULL_PAGE_MEAN_MS = 6000;

/** 144 random bits: the image address is the only thing protecting the image. */
const newImageToken = () => crypto.randomBytes(18).toString('base64url');

/** The reason a capture is aborted at shutdown: its job goes back to pending, not to failed. */
class ShutdownAbort extends Error {
  override readonly name = 'ShutdownAbort';
}

/**
 * Runs queued jobs: at most `concurrency` captures at once, every state transition persisted
 * before it is visible, one more try after a browser crash, a failure shown as a message chosen
 * by its class, recovery of unfinished jobs after a restart, and shutdown that re-queues.
 */
export class JobRunner {
  private readonly queue: PQueue;
  private readonly running = new Map<string, AbortController>();
  private readonly listeners = new Set<() => void>();
  private readonly log: Logger;
  /** Mean time of a job, without its delay: viewport captures and full pages apart. */
  private readonly meanMs = { viewport: INITIAL_MEAN_MS, fullPage: INITIAL_FULL_PAGE_MEAN_MS };
  private stopping = false;
  /** Full-page jobs waiting or running, for the estimate. */
  private queuedFullPages = 0;

  constructor(private readonly deps: JobRunnerDeps) {
    this.log = deps.log.child({ component: 'jobs' });
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

  /** True once stop() was called: no job starts any more. */
  isStopping(): boolean {
    return this.stopping;
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
   * Seconds until the last of `count` newly queued jobs of a kind (full page or not, with its
   * delay) should be done: the jobs ahead take a mean of both kinds weighted by the queue's full
   * pages; the new ones take their own kind's mean plus the delay.
   */
  estimateSeconds(count: number, kind: { fullPage: boolean; delayMs: number } = { fullPage: false, delayMs: 0 }): number {
    const concurrency = this.queue.concurrency;
    // The new jobs are queued already: the ones ahead are the others.
    const ahead = Math.max(0, this.depth() - count);
    const fullAhead = Math.min(ahead, Math.max(0, this.queuedFullPages - (kind.fullPage ? count : 0)));
    const own = (kind.fullPage ? this.meanMs.fullPage : this.meanMs.viewport) + kind.delayMs;
    const aheadMs = fullAhead * this.meanMs.fullPage + (ahead - fullAhead) * this.meanMs.viewport;
    const totalMs = aheadMs + Math.max(0, count - 1) * own;
    return Math.max(1, Math.ceil((totalMs / concurrency + own) / 1000));
  }

  /** Queues a stored pending job; `fullPage` counts it for the estimate. */
  enqueue(jobId: string, fullPage = false): void {
    if (fullPage) this.queuedFullPages++;
    const run = () => this.run(jobId).finally(() => {
      if (fullPage) this.queuedFullPages--;
    });
    void this.queue.add(run).catch((err: unknown) => this.log.error({ job_id: jobId, err }, 'running the job failed'));
  }

  /** Re-queues every job a previous run left pending or processing, oldest first. */
  async recover(): Promise<number> {
    const unfinished = await this.deps.store.unfinished();
    for (const job of unfinished) {
      if (job.status === 'processing') {
        // On a full disk the job stays `processing` on file; run() takes it all the same.
        await this.update(job._id, { status: 'pending', progress: 0 }).catch((err: unknown) =>
          this.log.warn({ job_id: job._id, err }, 'could not set it back to pending'),
        );
      }
      this.enqueue(job._id, job.full_page);
    }
    if (unfinished.length) this.log.info(`re-queued ${unfinished.length} unfinished job(s) from the previous run`);
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
    const unsaved = await this.deps.ends.stop();
    if (unsaved) this.log.warn(`${unsaved} job end(s) could not be stored (disk full?); those jobs run again at the next start`);
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  private async update(jobId: string, change: JobChange): Promise<void> {
    await this.deps.store.update(jobId, change);
  }

  private async run(jobId: string): Promise<void> {
    const job = this.deps.ends.overlay(await this.deps.store.get(jobId));
    // `processing` here is a job recover() could not set back to pending (a full disk).
    if (!job || (job.status !== 'pending' && job.status !== 'processing') || this.running.has(jobId) || this.stopping) return;
    const log = this.log.child({ job_id: jobId });
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
      log.debug('started');
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
            log.warn('browser crashed, retrying once');
            continue;
          }
          throw err;
        }
      }
      const fileName = `${newImageToken()}.${result.format === 'jpeg' ? 'jpg' : result.format}`;
      await this.deps.files.writeImage(fileName, result.image);
      imageFile = fileName;
      if (result.format !== 'pdf') {
        // Lists show it; one that cannot be made now is made from the image when first asked for.
        await this.deps.files.writeThumbnail(fileName, result.image).catch((err: unknown) => log.warn({ err }, 'could not make its thumbnail'));
      }
      if (result.html !== null && Buffer.byteLength(result.html) <= this.deps.pageSourceMaxBytes) {
        hasSource = true;
        await this.deps.files.writeSource(jobId, result.html);
      }
      await this.update(jobId, { progress: 90 });
      const ended = this.deps.clock.now();
      const kind = job.full_page ? 'fullPage' : 'viewport';
      const ownMs = Math.max(0, ended - started - (job.options?.delayMs ?? 0));
      this.meanMs[kind] = this.meanMs[kind] * 0.8 + ownMs * 0.2;
      await this.update(jobId, {
        status: 'completed',
        progress: 100,
        completed_at: ended,
        duration_ms: ended - started,
        image_file: fileName,
        has_page_source: hasSource,
        truncated: result.truncated,
        blocked_requests: result.blockedRequests,
        http_status: result.httpStatus,
        final_url: result.finalUrl,
        page_title: result.pageTitle,
        sealed_secrets: null,
      });
      log.debug({ duration_ms: ended - started }, 'completed');
    } catch (err) {
      // A job that did not complete keeps no files (the image may be whole while its job could not be stored).
      if (imageFile || hasSource) {
        await this.deps.files.remove(imageFile, jobId).catch((e: unknown) => log.warn({ err: e }, 'could not remove its files'));
      }
      if (controller.signal.reason instanceof ShutdownAbort) {
        await this.update(jobId, { status: 'pending', progress: 0, attempts: job.attempts });
        return;
      }
      const failure = describeFailure(err, controller.signal);
      this.deps.onFailed?.(err, controller.signal);
      if (failure.internal) log.error({ err }, `failed: ${failure.message}`);
      else log.debug(`failed: ${failure.message}`);
      const ended = this.deps.clock.now();
      await this.deps.ends.save(jobId, {
        status: 'failed',
        progress: 0,
        completed_at: ended,
        duration_ms: ended - started,
        error: failure.message,
        sealed_secrets: null,
      });
    } finally {
      clearTimeout(deadline);
      this.running.delete(jobId);
      this.emit();
    }
    if (!this.deps.ends.isUnsaved(jobId)) await this.deps.ends.announce(jobId);
  }

  /** The job's sealed secrets, opened; a job whose secrets cannot be opened fails saying so. */
  private secretsOf(job: JobRecord): JobSecrets {
    if (!job.sealed_secrets) return {};
    try {
      return this.deps.secrets.open<JobSecrets>(job.sealed_secrets);
    } catch {
      throw new CaptureError(
        "The job's headers, cookies or credentials could not be read: the data directory's job-secrets.key changed since it was created",
      );
    }
  }

  private capture(job: JobRecord, signal: AbortSignal): Promise<CaptureResult> {
    const settings = this.deps.settings.get();
    const { scale, ...options } = job.options ?? {};
    const preset = PRESETS[job.device];
    return this.deps.engine.capture({
      url: job.url,
      preset: scale === undefined ? preset : { ...preset, deviceScaleFactor: scale },
      options: { ...options, ...this.secretsOf(job) },
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
