import crypto from 'node:crypto';

import PQueue from 'p-queue';

import { BrowserCrashedError, type CaptureEngine, CaptureError, type CaptureResult } from '../capture/engine.js';
import { HTML_JOB_URL } from '../capture/html-document.js';
import { PRESETS } from '../capture/presets.js';
import type { Logger } from '../logger.js';
import type { SettingsService } from '../settings.js';
import type { FileStore } from '../store/file-store.js';
import type { JobChange, JobSecretStore, JobStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import { FairQueue, fairTurns, type QueuedJob } from './fair-queue.js';
import type { JobEnds } from './job-ends.js';
import { classifyFailure } from './job-failure.js';
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
  /** Where those sealed secrets wait until the job ends, when the runner erases them. */
  jobSecrets: JobSecretStore;
  /** Cluster mode: the store is shared with other nodes, which take jobs by claiming them. @default none (one node) */
  cluster?: ClusterRunOptions;
}

/** How a node of a cluster takes its share of the jobs. */
export interface ClusterRunOptions {
  /** This node's name in job leases; a new one at every start, so a restarted node's old leases simply run out. */
  node: string;
  /** How long a claim holds without renewal: a dead node's jobs run again elsewhere after this. @default 30000 */
  leaseMs: number;
  /** How often the node looks for work it was not told about (jobs posted to other nodes, leases run out). @default 1000 */
  pollMs: number;
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

/** What the runner needs of a job to queue it. */
type QueueableJob = Pick<JobRecord, '_id' | 'account_id' | 'turn' | 'created_at' | 'full_page' | 'options'>;

const queuedJob = (job: QueueableJob): QueuedJob => ({
  id: job._id,
  accountId: job.account_id,
  turn: job.turn ?? 0,
  createdAt: job.created_at,
  fullPage: job.full_page,
  delayMs: job.options?.delayMs ?? 0,
});

/** 144 random bits: the image address is the only thing protecting the image. */
const newImageToken = () => crypto.randomBytes(18).toString('base64url');

/** The reason a capture is aborted at shutdown: its job goes back to pending, not to failed. */
class ShutdownAbort extends Error {
  override readonly name = 'ShutdownAbort';
}

/** The reason a capture is aborted when its lease was lost: another node runs the job now. */
class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
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
  /**
   * The jobs waiting for a slot here, in the fair order (round-robin by account), and those
   * running. The p-queue holds one run per waiting job (addRun): when a run gets a slot, it
   * takes whichever job the fair order names then.
   */
  private readonly fair = new FairQueue();
  /** Cluster mode: jobs this node claimed (waiting in its queue or running). */
  private readonly claimed = new Set<string>();
  /** Cluster mode: jobs waiting in the shared store, as last counted. */
  private sharedPending = 0;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: JobRunnerDeps) {
    this.log = deps.log.child({ component: 'jobs' });
    this.queue = new PQueue({ concurrency: deps.settings.get().concurrency });
    deps.settings.onChange((s) => {
      this.queue.concurrency = s.concurrency;
    });
    this.queue.on('active', () => this.emit());
    this.queue.on('next', () => {
      this.emit();
      if (deps.cluster) this.poke();
    });
  }

  /** Jobs waiting or running (in cluster mode: waiting anywhere, and running here). */
  depth(): number {
    return this.queue.size + this.queue.pending + (this.deps.cluster ? this.sharedPending : 0);
  }

  /** Cluster mode: jobs wait in the store the nodes share, and each node runs those it claims. */
  waitsInStore(): boolean {
    return this.deps.cluster !== undefined;
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
   * The turns in the fair order of `count` new jobs of the account (fairTurns), from the jobs
   * waiting and running here; undefined in cluster mode, where the store gives them.
   */
  turnsFor(accountId: string, count: number): number[] | undefined {
    return this.deps.cluster ? undefined : fairTurns(count, this.fair.turnsState(accountId));
  }

  /** The account's jobs waiting or running on this node (one node: all of them). */
  accountDepth(accountId: string): number {
    return this.fair.countOf(accountId);
  }

  /**
   * Seconds until the last of `count` newly queued jobs of a kind (full page or not, with its
   * delay) should be done. Given that last job's id (`lastJobId`) while it waits here, the jobs
   * ahead of it are those the fair order takes before it (and those running), each at its own
   * kind's mean plus its delay. Otherwise (in cluster mode, where jobs wait in the store) every
   * job waiting or running counts as ahead, the other nodes' at the viewport mean.
   */
  estimateSeconds(count: number, kind: { fullPage: boolean; delayMs: number } = { fullPage: false, delayMs: 0 }, lastJobId?: string): number {
    const own = this.costMs(kind);
    const found = lastJobId === undefined ? undefined : this.fair.find(lastJobId);
    if (found?.running) return Math.max(1, Math.ceil(own / 1000));
    if (found) return this.secondsAfter(this.fair.ahead(found.job), own);
    const here = this.fair.all();
    // The new jobs are queued already (in cluster mode, in the store): the ones ahead are the others.
    const ahead = this.deps.cluster ? here : here.slice(0, Math.max(0, here.length - count));
    const elsewhere = this.deps.cluster ? Math.max(0, this.sharedPending - count) : 0;
    return this.secondsAfter(ahead, own, elsewhere * this.meanMs.viewport + Math.max(0, count - 1) * own);
  }

  /** Seconds until a new job of a kind is done behind `ahead` jobs counted elsewhere (a cluster's store), each at the viewport mean. */
  estimateBehind(ahead: number, kind: { fullPage: boolean; delayMs: number }): number {
    return this.secondsAfter([], this.costMs(kind), ahead * this.meanMs.viewport);
  }

  /** Whether the job waits or runs here. */
  holds(jobId: string): boolean {
    return this.fair.find(jobId) !== undefined;
  }

  /**
   * Seconds until enough of the account's jobs have ended that `count` more fit within `max`
   * (its share of the queue): its running jobs end first, then its waiting ones in the fair order.
   */
  accountWaitSeconds(accountId: string, count: number, max: number): number {
    const excess = this.fair.countOf(accountId) + count - max;
    const place = excess - this.fair.runningOf(accountId);
    const waiting = this.fair.waitingOf(accountId);
    if (place <= 0 || waiting.length === 0) return Math.max(1, Math.ceil(this.meanMs.viewport / 1000));
    const job = waiting[Math.min(place, waiting.length) - 1];
    return this.secondsAfter(this.fair.ahead(job), this.costMs(job));
  }

  private costMs(job: { fullPage: boolean; delayMs: number }): number {
    return (job.fullPage ? this.meanMs.fullPage : this.meanMs.viewport) + job.delayMs;
  }

  /** Seconds until a job of `ownMs` is done after `ahead` (and `moreMs` of other work) shared among the slots. */
  private secondsAfter(ahead: readonly QueuedJob[], ownMs: number, moreMs = 0): number {
    const aheadMs = ahead.reduce((sum, job) => sum + this.costMs(job), moreMs);
    return Math.max(1, Math.ceil((aheadMs / this.queue.concurrency + ownMs) / 1000));
  }

  /**
   * Queues a stored pending job; its kind (full page, delay) counts for the estimate. In cluster
   * mode it waits in the store for a node to claim it.
   */
  enqueue(job: QueueableJob): void {
    if (this.deps.cluster) {
      this.sharedPending++;
      this.poke();
      return;
    }
    this.runLocally(job);
  }

  /** Puts the job in the fair order, and one run in the queue. */
  private runLocally(job: QueueableJob): void {
    this.fair.push(queuedJob(job));
    this.addRun();
  }

  /** Adds one run to the queue: when it gets a slot, it runs whichever job the fair order names then. */
  private addRun(): void {
    const runNext = async () => {
      const next = this.fair.take();
      if (!next) return;
      try {
        await this.run(next.id);
      } catch (err) {
        this.log.error({ job_id: next.id, err }, 'running the job failed');
      } finally {
        this.fair.done(next);
      }
    };
    void this.queue.add(runNext);
  }

  /**
   * Re-queues every job a previous run left pending or processing, in their turns. In cluster
   * mode the node starts claiming instead: waiting jobs, and those whose node's lease ran out.
   */
  async recover(): Promise<number> {
    if (this.deps.cluster) {
      this.startClaiming(this.deps.cluster);
      return 0;
    }
    const unfinished = await this.deps.store.unfinished();
    for (const job of unfinished) {
      if (job.status === 'processing') {
        // On a full disk the job stays `processing` on file; run() takes it all the same.
        await this.update(job._id, { status: 'pending', progress: 0 }).catch((err: unknown) =>
          this.log.warn({ job_id: job._id, err }, 'could not set it back to pending'),
        );
      }
    }
    // Every job is in the fair order before the first starts, so the first to start is the first in turn, not the oldest.
    for (const job of unfinished) this.fair.push(queuedJob(job));
    for (let i = 0; i < unfinished.length; i++) this.addRun();
    if (unfinished.length) this.log.info(`re-queued ${unfinished.length} unfinished job(s) from the previous run`);
    return unfinished.length;
  }

  /**
   * Stops taking jobs, gives running captures `graceMs` to finish, then aborts the rest;
   * aborted and waiting jobs stay pending in the store and run again at the next start (or, in
   * cluster mode, on another node at once).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    this.queue.pause();
    this.queue.clear();
    this.fair.clear();
    await this.claiming;
    await this.releaseWaiting();
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

  /** Sets fields of a job; in cluster mode only while this node holds its lease (false once lost). */
  private update(jobId: string, change: JobChange): Promise<boolean> {
    return this.deps.store.update(jobId, change, this.deps.cluster?.node);
  }

  /** Cluster mode: looks for work now and every pollMs, and renews the leases of running jobs. */
  private startClaiming(cluster: ClusterRunOptions): void {
    this.poke();
    this.timers.push(setInterval(() => this.poke(), cluster.pollMs));
    this.timers.push(setInterval(() => void this.renewLeases(cluster), Math.max(250, cluster.leaseMs / 3)));
    for (const timer of this.timers) timer.unref();
  }

  /** Cluster mode: claims as many jobs as there are free slots (one round at a time; a poke during a round runs another). */
  private poke(): void {
    if (!this.deps.cluster || this.stopping) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    const cluster = this.deps.cluster;
    this.claiming = this.claimRound(cluster)
      .catch((err: unknown) => this.log.warn({ err }, 'could not claim jobs from the store'))
      .finally(() => {
        this.claiming = undefined;
        if (this.claimAgain) {
          this.claimAgain = false;
          this.poke();
        }
      });
  }

  private async claimRound(cluster: ClusterRunOptions): Promise<void> {
    const free = this.queue.concurrency - this.queue.size - this.queue.pending;
    if (free > 0 && !this.queue.isPaused && !this.stopping) {
      const now = this.deps.clock.now();
      for (const job of await this.deps.store.claim(cluster.node, free, now, now + cluster.leaseMs)) {
        this.claimed.add(job._id);
        this.runLocally(job);
      }
    }
    this.sharedPending = await this.deps.store.count({ status: ['pending'] });
  }

  /** Cluster mode: extends the leases of claimed jobs; a job whose lease was lost is stopped here. */
  private async renewLeases(cluster: ClusterRunOptions): Promise<void> {
    if (this.claimed.size === 0) return;
    try {
      const ids = [...this.claimed];
      const held = new Set(await this.deps.store.renew(cluster.node, ids, this.deps.clock.now() + cluster.leaseMs));
      for (const id of ids) {
        if (held.has(id) || !this.claimed.has(id)) continue;
        this.log.warn({ job_id: id }, 'its lease was lost (another node runs it now); stopping it here');
        this.claimed.delete(id);
        this.running.get(id)?.abort(new LeaseLost('lease lost'));
      }
    } catch (err) {
      // The store is out of reach: the leases hold until they run out, and renewal is tried again.
      this.log.warn({ err }, 'could not renew the job leases');
    }
  }

  /** Cluster mode, at shutdown: claimed jobs that never started go back to waiting, for other nodes. */
  private async releaseWaiting(): Promise<void> {
    if (!this.deps.cluster) return;
    for (const id of this.claimed) {
      if (this.running.has(id)) continue;
      await this.update(id, { status: 'pending', progress: 0, lease_owner: null, lease_until: null }).catch((err: unknown) =>
        this.log.warn({ job_id: id, err }, 'could not hand it back'),
      );
      this.claimed.delete(id);
    }
  }

  private async run(jobId: string): Promise<void> {
    const job = this.deps.ends.overlay(await this.deps.store.get(jobId));
    // `processing` here is a job recover() could not set back to pending (a full disk).
    if (!job || (job.status !== 'pending' && job.status !== 'processing') || this.running.has(jobId) || this.stopping) {
      // A claimed job that is not run goes back at shutdown (releaseWaiting); any other is no longer this node's.
      if (!this.stopping && !this.running.has(jobId)) this.claimed.delete(jobId);
      return;
    }
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
    let wroteOutputs = false;
    /** Whether this run stored the job's end, so that it, and only it, announces the end. */
    let endStored = false;
    /** Whether the job ended here (its end stored, or kept for a full disk): its secrets go. */
    let over = false;
    const cluster = this.deps.cluster;
    /** In cluster mode a write refused for the lease means another node runs the job now. */
    const held = (stored: boolean) => {
      if (cluster && !stored) throw new LeaseLost('lease lost');
    };
    try {
      held(await this.update(jobId, { status: 'processing', progress: 10, started_at: started }));
      log.debug('started');
      this.emit();
      // A document given as html is never fetched; everything it loads meets the egress proxy.
      if (this.deps.guard && job.url !== HTML_JOB_URL) await this.deps.guard.checkUrl(job.url);
      const secrets = await this.secretsOf(job);
      let result: CaptureResult | undefined;
      for (;;) {
        attempts++;
        await this.update(jobId, { attempts });
        try {
          result = await this.capture(job, secrets, controller.signal);
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
      const outputs = await storeOutputs(this.deps.files, jobId, result);
      wroteOutputs = true;
      await this.update(jobId, { progress: 90 });
      const ended = this.deps.clock.now();
      const kind = job.full_page ? 'fullPage' : 'viewport';
      const ownMs = Math.max(0, ended - started - (job.options?.delayMs ?? 0));
      this.meanMs[kind] = this.meanMs[kind] * 0.8 + ownMs * 0.2;
      endStored = await this.update(jobId, {
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
        warnings: result.warnings,
        ...outputs,
        ...webhookDue(job),
      });
      held(endStored);
      over = true;
      log.debug({ duration_ms: ended - started }, 'completed');
    } catch (err) {
      // A job that did not complete keeps no files (the image may be whole while its job could not be stored).
      if (imageFile || hasSource || wroteOutputs) {
        await this.deps.files.remove(imageFile, jobId).catch((e: unknown) => log.warn({ err: e }, 'could not remove its files'));
      }
      if (controller.signal.reason instanceof ShutdownAbort) {
        await this.update(jobId, { status: 'pending', progress: 0, attempts: job.attempts, ...(cluster ? { lease_owner: null, lease_until: null } : {}) });
        return;
      }
      if (err instanceof LeaseLost || controller.signal.reason instanceof LeaseLost) {
        log.warn('another node took the job over; its end is that node\'s to store');
        return;
      }
      const failure = classifyFailure(err, controller.signal);
      this.deps.onFailed?.(err, controller.signal);
      if (failure.internal) log.error({ err }, `failed: ${failure.message}`);
      else log.debug(`failed: ${failure.message}`);
      const ended = this.deps.clock.now();
      const saved = await this.deps.ends.save(
        jobId,
        { status: 'failed', progress: 0, completed_at: ended, duration_ms: ended - started, error: failure.message, ...webhookDue(job) },
        cluster?.node,
      );
      over = saved !== 'lost';
      // A deferred end (a full disk) is announced by JobEnds once it is stored.
      endStored = saved === 'stored';
    } finally {
      clearTimeout(deadline);
      this.running.delete(jobId);
      this.claimed.delete(jobId);
      this.emit();
    }
    // Erased before the end is announced: a webhook saying the job ended means its secrets are gone.
    if (over && job.has_secrets) {
      await this.deps.jobSecrets.remove([jobId]).catch((err: unknown) => log.warn({ err }, 'could not erase its secrets; the next start does'));
    }
    if (endStored) await this.deps.ends.announce(jobId);
  }

  /** The job's sealed secrets, opened; a job whose secrets are gone or cannot be opened fails saying so. */
  private async secretsOf(job: JobRecord): Promise<JobSecrets> {
    if (!job.has_secrets) return {};
    const sealed = await this.deps.jobSecrets.get(job._id);
    if (sealed === null) {
      throw new CaptureError(
        "The job's headers, cookies or credentials are no longer kept (a data directory restored from a backup holds none); ask for the screenshot again",
      );
    }
    try {
      return this.deps.secrets.open<JobSecrets>(sealed);
    } catch {
      throw new CaptureError(
        "The job's headers, cookies or credentials could not be read: the data directory's job-secrets.key changed since it was created",
      );
    }
  }

  private capture(job: JobRecord, secrets: JobSecrets, signal: AbortSignal): Promise<CaptureResult> {
    const settings = this.deps.settings.get();
    const { scale, ...options } = job.options ?? {};
    const preset = PRESETS[job.device];
    return this.deps.engine.capture({
      url: job.url,
      preset: scale === undefined ? preset : { ...preset, deviceScaleFactor: scale },
      options: { ...options, ...secrets },
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

/** The extracted outputs of a capture: Markdown, text and links stored as files, the rest for the job record. */
async function storeOutputs(files: FileStore, jobId: string, result: CaptureResult): Promise<Partial<JobRecord>> {
  const extracted = result.extracted;
  if (!extracted) return {};
  const fields: Partial<JobRecord> = {};
  if (extracted.markdown !== undefined) await files.writeOutput(jobId, 'markdown', extracted.markdown);
  if (extracted.text !== undefined) await files.writeOutput(jobId, 'text', extracted.text);
  if (extracted.links !== undefined) await files.writeOutput(jobId, 'links', JSON.stringify(extracted.links));
  fields.has_markdown = extracted.markdown !== undefined;
  fields.has_text = extracted.text !== undefined;
  fields.has_links = extracted.links !== undefined;
  if (extracted.linksTruncated) fields.links_truncated = true;
  if (extracted.metadata) fields.metadata = extracted.metadata;
  return fields;
}

/** Stored with a job's end when it has a webhook to send, until the delivery is stored (jobEndWebhooks). */
function webhookDue(job: JobRecord): { webhook_due?: true } {
  return job.callback_url ? { webhook_due: true } : {};
}
