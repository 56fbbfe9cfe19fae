import crypto from 'node:crypto';

import { type DeviceName, PRESETS } from '../capture/presets.js';
import { SecretBox } from '../crypto/secret-box.js';
import { AccountShareFullError, NotFoundError, QueueFullError, ShuttingDownError } from '../domain-errors.js';
import { SerialByKey } from '../serial-by-key.js';
import type { SettingsService } from '../settings.js';
import { secretNames, splitJobOptions } from '../store/records/job-options.js';
import { hasEnded, type JobRecord, type JobStatus, UNFINISHED_STATUSES } from '../store/records/job-record.js';
import type { JobSecretStore, JobStore, StatsStore } from '../store/stores.js';
import { type Clock, HOUR_MS, utcHourStart } from '../time.js';
import type { CreateParams } from './create-params.js';
import type { EndWriteBehind } from './end-write-behind.js';
import type { JobKind, JobQueue } from './job-queue.js';
import { resultCacheKey } from './result-cache.js';

export interface JobServiceDeps {
  store: JobStore;
  /** Job ends per hour, for the dashboard. */
  stats: StatsStore;
  clock: Clock;
  /** Where the jobs this service creates wait for the runner (JobRunner.queue). */
  queue: JobQueue;
  /** Ends of jobs not stored yet (a full disk), which readers see all the same. */
  ends: EndWriteBehind;
  /** Its `queue_limit`: most jobs waiting or running before a request is refused (QueueFullError). */
  settings: SettingsService;
  /** Seals the secrets of a job's options until it ends. */
  secrets: SecretBox;
  /** Where those sealed secrets wait, apart from the job records. */
  jobSecrets: JobSecretStore;
  /**
   * Cluster mode: another node may run a job made here, and its end is announced there, so
   * waiters also read the store this often. @default none (every end is announced here)
   */
  pollEndsMs?: number;
}

/** Candidates read for a result-cache key: the newest few, of which one usually serves. */
const CACHE_CANDIDATES = 20;
/** The one turn every cached creation takes: a request's devices have several cache keys. */
const CACHE_TURN = 'result-cache';

const newJobId = () => `job_${crypto.randomBytes(12).toString('hex')}`;

/** The fewest jobs an account may always have waiting or running, whatever its share works out to (within the queue limit). */
export const MIN_ACCOUNT_SHARE = 5;

/**
 * The most jobs one account may have waiting or running: `account_queue_share` percent of the
 * queue limit, never fewer than MIN_ACCOUNT_SHARE, never more than the limit. Past it that
 * account is refused (AccountShareFullError) while the others are still admitted, so one account cannot fill the queue.
 */
export function accountShare(settings: { queue_limit: number; account_queue_share: number }): number {
  return Math.min(settings.queue_limit, Math.max(MIN_ACCOUNT_SHARE, Math.floor((settings.queue_limit * settings.account_queue_share) / 100)));
}

/** A job a request got: made for it, or (`cached`) an identical earlier one served from the cache. */
export interface RequestedJob {
  job: JobRecord;
  cached: boolean;
}

/** Charges the account for `count` new jobs around their creation (QuotaService.chargeFor). */
export type Charge = (count: number, create: () => Promise<JobRecord[]>) => Promise<JobRecord[]>;

/**
 * Screenshot jobs as requests see them: room in the queue (back-pressure), creation, and
 * queries. The queue itself (stats, pause, resume, changes, estimates) is the JobQueue, held by
 * whoever asks it; running the jobs is the JobRunner's.
 */
export class JobService {
  /** Slots promised to requests between the capacity check and their insert. */
  private reserved = 0;
  /** The same, per account. */
  private readonly reservedBy = new Map<string, number>();
  /**
   * Cached creations take turns, so that of two identical requests arriving together the second
   * finds the first one's job (and captures nothing) instead of both missing the cache. A lookup
   * is one indexed read and a miss one insert, so holding the turn is short.
   */
  private readonly cacheTurns = new SerialByKey();
  /** Who waits for which job to end (render links). */
  private readonly waiting = new Map<string, Set<(job: JobRecord) => void>>();

  constructor(private readonly deps: JobServiceDeps) {}

  /**
   * Holds queue room for `count` jobs of an account, or throws: ShuttingDownError, QueueFullError
   * when the queue is full, AccountShareFullError when the account would pass its share of it
   * (accountShare; in cluster mode that bound is checked in the store as the jobs are inserted,
   * see create). The caller must call the returned release once its jobs are inserted (or refused).
   */
  holdCapacity(count: number, accountId?: string): () => void {
    const settings = this.deps.settings.get();
    const limit = settings.queue_limit;
    const queue = this.deps.queue;
    if (queue.isClosed()) {
      throw new ShuttingDownError();
    }
    if (queue.depth() + this.reserved + count > limit) {
      const wait = Math.max(1, queue.estimateSeconds(0));
      throw new QueueFullError(limit, wait);
    }
    const own = accountId === undefined ? 0 : queue.accountDepth(accountId) + (this.reservedBy.get(accountId) ?? 0);
    const share = accountShare(settings);
    if (accountId !== undefined && !queue.waitsInStore() && own + count > share) {
      throw new AccountShareFullError(own, share, limit, queue.accountWaitSeconds(accountId, count, share));
    }
    this.reserved += count;
    if (accountId !== undefined) this.reservedBy.set(accountId, (this.reservedBy.get(accountId) ?? 0) + count);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= count;
      if (accountId === undefined) return;
      const left = (this.reservedBy.get(accountId) ?? 0) - count;
      if (left > 0) this.reservedBy.set(accountId, left);
      else this.reservedBy.delete(accountId);
    };
  }

  /**
   * Seconds until the last of a request's new jobs (`last`, one of `count`) should be done, from
   * the jobs the fair order takes before it: in cluster mode, where it may wait in the store,
   * those the store counts.
   */
  async estimateFor(last: JobRecord, count: number, kind: JobKind): Promise<number> {
    const queue = this.deps.queue;
    if (!queue.waitsInStore() || queue.holds(last._id)) return queue.estimateSeconds(count, kind, last._id);
    // The jobs are stored already: a store that does not answer now leaves the estimate to what this node knows.
    return this.deps.store.countAhead(last).then(
      (ahead) => queue.estimateBehind(ahead, kind),
      () => queue.estimateSeconds(count, kind),
    );
  }

  /**
   * The jobs of a request, one per device, charged through `charge`. With `cache_ttl` a device
   * whose identical result completed within that many seconds, or is being captured now, gets
   * that job (`cached`), without a new capture and without a charge; the others are created.
   */
  async request(accountId: string, keyId: string, params: CreateParams, baseUrl: string, charge: Charge): Promise<RequestedJob[]> {
    // Room in the queue is asked only for jobs to be made: a cached result is served even when the queue is full.
    const make = async (devices: DeviceName[], cacheKeys?: string[]) => {
      const release = this.holdCapacity(devices.length, accountId);
      try {
        return await charge(devices.length, () => this.create(accountId, keyId, { ...params, devices }, baseUrl, cacheKeys));
      } finally {
        release();
      }
    };
    if (params.cache_ttl <= 0) return (await make(params.devices)).map((job) => ({ job, cached: false }));
    return this.cacheTurns.run(CACHE_TURN, async () => {
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
    const candidates = await this.deps.store.byCacheKey(cacheKey, CACHE_CANDIDATES);
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
    const ended = (job: JobRecord | null) => !job || hasEnded(job.status);
    let listener: ((job: JobRecord) => void) | undefined;
    const announced = new Promise<JobRecord>((resolve) => {
      listener = resolve;
      const set = this.waiting.get(jobId) ?? new Set();
      set.add(resolve);
      this.waiting.set(jobId, set);
    });
    let timer: NodeJS.Timeout | undefined;
    let poller: NodeJS.Timeout | undefined;
    try {
      // Read after listening, so an end between the two is not missed.
      const current = await this.find(jobId);
      if (ended(current)) return current;
      const timedOut = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), Math.max(0, timeoutMs));
      });
      const pollMs = this.deps.pollEndsMs;
      const polled = new Promise<JobRecord | null>((resolve) => {
        if (pollMs) poller = setInterval(() => void this.find(jobId).then((job) => ended(job) && resolve(job), () => undefined), pollMs);
      });
      return (await Promise.race([announced, timedOut, polled])) ?? (await this.find(jobId));
    } finally {
      clearTimeout(timer);
      clearInterval(poller);
      const set = this.waiting.get(jobId);
      set?.delete(listener!);
      if (set?.size === 0) this.waiting.delete(jobId);
    }
  }

  /** Called once a job's end is stored: counts it for the dashboard and wakes those waiting for it. */
  ended(job: JobRecord): void {
    if (job.completed_at !== null && hasEnded(job.status)) {
      // A count the store refuses (a full disk) is only missing from the dashboard's chart.
      this.deps.stats.countEnd(utcHourStart(job.completed_at), job.status).catch(() => undefined);
    }
    for (const wake of this.waiting.get(job._id) ?? []) wake(job);
  }

  /**
   * Creates and queues one job per device (`cacheKeys`, when given, in the same order); `batch`:
   * the job of a batch's item (POST /v1/batches), one device.
   */
  async create(
    accountId: string,
    keyId: string,
    params: CreateParams,
    baseUrl: string,
    cacheKeys?: string[],
    batch?: { id: string; index: number },
  ): Promise<JobRecord[]> {
    const now = this.deps.clock.now();
    const group = batch?.id ?? newJobId().replace('job_', 'batch_');
    // Options too large for the record wait sealed with the secrets: a record lives for the history period, in memory with NeDB.
    const { kept, apart } = splitJobOptions(params.options);
    const sealedValues = { ...apart, ...params.secrets };
    const hasSealed = Object.keys(sealedValues).length > 0;
    const jobs: JobRecord[] = [];
    for (const [i, device] of params.devices.entries()) {
      const job: JobRecord = {
        _id: newJobId(),
        account_id: accountId,
        key_id: keyId,
        batch_id: group,
        ...(batch ? { batch_index: batch.index } : {}),
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
        options: kept,
        has_secrets: hasSealed,
        secret_names: secretNames(params.secrets, apart),
        ...(cacheKeys ? { cache_key: cacheKeys[i] } : {}),
      };
      jobs.push(job);
    }
    // Each job's secrets are sealed on their own (a job ends, and they are erased, on its own).
    const sealed = hasSealed ? jobs.map((job) => ({ id: job._id, sealed: this.deps.secrets.seal(sealedValues) })) : [];
    await this.deps.jobSecrets.put(sealed);
    const dropSecrets = () => this.deps.jobSecrets.remove(sealed.map((s) => s.id)).catch(() => undefined);
    // Each job gets its turn in the fair order. One node knows its whole queue (and holdCapacity has
    // counted the account's share); in a cluster the store gives the turns and counts the share, seeing every node's jobs.
    const settings = this.deps.settings.get();
    const share = accountShare(settings);
    const turns = this.deps.queue.turnsFor(accountId, jobs.length);
    let queued: JobRecord[] | null;
    try {
      if (turns) {
        queued = jobs.map((job, i) => ({ ...job, turn: turns[i] }));
        await this.deps.store.insert(queued);
      } else {
        queued = await this.deps.store.enqueue(jobs, share);
      }
    } catch (err) {
      await dropSecrets();
      throw err;
    }
    if (!queued) {
      await dropSecrets();
      const have = await this.deps.store.count({ account_id: accountId, status: UNFINISHED_STATUSES });
      throw new AccountShareFullError(have, share, settings.queue_limit, this.deps.queue.estimateSeconds(0));
    }
    for (const job of queued) this.deps.queue.enqueue(job);
    return queued;
  }

  /** A job of this account, or NotFoundError — also for another account's job, so ids reveal nothing. */
  async getOwned(accountId: string, jobId: string): Promise<JobRecord> {
    const job = await this.find(jobId);
    if (!job || job.account_id !== accountId) throw new NotFoundError('screenshot job', jobId);
    return job;
  }

  async find(jobId: string): Promise<JobRecord | null> {
    if (typeof jobId !== 'string' || jobId.length > 64) return null;
    return this.deps.ends.overlay(await this.deps.store.get(jobId));
  }

  async findByImage(imageFile: string): Promise<JobRecord | null> {
    return this.deps.ends.overlay(await this.deps.store.byImage(imageFile));
  }

  /** Job history, newest first, for the admin. */
  async list(filter: { status?: JobStatus; account_id?: string; before?: string; limit: number }): Promise<JobRecord[]> {
    const cursor = filter.before ? await this.find(filter.before) : null;
    const jobs = await this.deps.store.list({
      status: filter.status,
      account_id: filter.account_id,
      before: cursor ? { created_at: cursor.created_at, id: cursor._id } : undefined,
      limit: filter.limit,
    });
    return jobs.map((job) => this.deps.ends.overlay(job)!);
  }

  /** Jobs ended per hour over the last `hours` hours, oldest first, from the counts kept as jobs end. */
  async hourly(hours: number): Promise<Array<{ hour: number; completed: number; failed: number }>> {
    const first = utcHourStart(this.deps.clock.now()) - (hours - 1) * HOUR_MS;
    const counted = new Map((await this.deps.stats.hoursSince(first)).map((h) => [h.hour, h]));
    return Array.from({ length: hours }, (_, i) => {
      const hour = first + i * HOUR_MS;
      return { hour, completed: counted.get(hour)?.completed ?? 0, failed: counted.get(hour)?.failed ?? 0 };
    });
  }
}
