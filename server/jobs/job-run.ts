import crypto from 'node:crypto';

import { type CaptureLogin, SessionRefusedError } from '../capture/capture-login.js';
import { BrowserCrashedError, type CaptureEngine, CaptureError, type CaptureResult, IMAGE_CONTENT_TYPES } from '../capture/engine.js';
import { HTML_JOB_URL } from '../capture/options/html-document.js';
import { htmlToText } from '../capture/outputs/html-text.js';
import { type BundleSigner, packEvidence } from '../capture/outputs/wacz-bundle.js';
import { PRESETS } from '../capture/presets.js';
import type { NetworkScope } from '../contract/admin.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Logger } from '../logger.js';
import type { LoginService } from '../logins/login-service.js';
import type { SettingsService } from '../settings.js';
import { evidenceName, type FileStore } from '../store/file-store.js';
import type { SealedJobValues } from '../store/records/job-options.js';
import type { JobRecord } from '../store/records/job-record.js';
import type { JobChange, JobSecretStore, JobStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import type { CustomerUploads } from '../uploads/customer-upload.js';
import type { EndWriteBehind } from './end-write-behind.js';
import { classifyFailure, StoppedServiceError } from './job-failure.js';

/** Decides whether the service may reach a URL (within a key's scope, when given); throws with the reason when not. */
export interface UrlGuard {
  checkUrl(url: string, scope?: NetworkScope): Promise<unknown>;
}

/**
 * The network one job may reach: its key's scope, which the check of its URL applies, and the
 * door of the egress proxy that holds every connection of its capture to that scope.
 */
export interface JobNetwork {
  scope: NetworkScope;
  proxyServer: string | undefined;
}

/** What a job's run uses. */
export interface JobRunDeps {
  store: JobStore;
  files: FileStore;
  engine: CaptureEngine;
  settings: SettingsService;
  clock: Clock;
  log: Logger;
  ends: EndWriteBehind;
  guard?: UrlGuard;
  /** A job's network, read as its run begins, so a key's new scope holds its waiting jobs too. @default none: the guard's settings alone */
  networkOf?: (job: JobRecord) => Promise<JobNetwork>;
  /** Largest page source stored, bytes. */
  pageSourceMaxBytes: number;
  /** Told why each job failed (the metrics count failures by class). @default none */
  onFailed?: (err: unknown, signal: AbortSignal) => void;
  /** Told of each capture tried again after its browser crashed (the metrics count crashes). @default none */
  onRetried?: (err: unknown) => void;
  /** Opens the sealed secrets of a job's options. */
  secrets: SecretBox;
  /** Where those sealed secrets wait until the job ends, when the runner erases them. */
  jobSecrets: JobSecretStore;
  /** Uploads the image to the account's storage destination when the request asked for it. @default none */
  uploads?: CustomerUploads;
  /** Signs the evidence bundles of `evidence` jobs, naming `software` as their maker. @default none: no bundle is made */
  evidence?: { signer: BundleSigner; software: string };
  /** The saved logins a job may name (`login`). @default none: such a job fails saying so */
  logins?: LoginService;
}

/** Characters of a page's text an evidence bundle holds when `extract` did not give it (read from the rendered HTML). */
const EVIDENCE_TEXT_BOUNDS = { maxChars: 1_000_000, maxInputChars: 20_000_000 };

/** What a job's run shares with the runner around it. */
export interface JobRunContext {
  deps: JobRunDeps;
  /** The runner's log (component `jobs`). */
  log: Logger;
  /** Cluster mode: this node's name, whose lease every write needs. @default none (one node) */
  node?: string;
  /** The jobs running here, each with the controller that stops it. */
  running: Map<string, AbortController>;
  /** True once the runner stops: no job starts any more. */
  isStopping(): boolean;
  /** Sets fields of a job; in cluster mode only while this node holds its lease (false once lost). */
  update(jobId: string, change: JobChange): Promise<boolean>;
  /** The job is no longer this node's to hold (cluster mode). */
  forgetClaim(jobId: string): void;
  /** Counts a completed job's time (without its delay) into its kind's mean. */
  measured(fullPage: boolean, ms: number): void;
  /** Tells the queue's listeners it changed. */
  emit(): void;
}

/** The reason a capture is aborted at shutdown: its job goes back to pending, not to failed. */
export class ShutdownAbort extends Error {
  override readonly name = 'ShutdownAbort';
}

/** The reason a capture is aborted when its lease was lost: another node runs the job now. */
export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
}

/**
 * How many times a job is run again after its process (or, in a cluster, its node) stopped
 * without a word while the job ran. A page can kill the process (a browser message too large for
 * Node, say); run again at every start, it would kill every later start too, and a service
 * manager restarting it would loop. Each run's start is stored before its capture (`starts`), so
 * a job begun this many times more than once fails instead (StoppedServiceError).
 * @default 2: three runs in all
 */
export const MAX_RUNS_AFTER_A_STOP = 2;

/** 144 random bits: the image address is the only thing protecting the image. */
const newImageToken = () => crypto.randomBytes(18).toString('base64url');

/**
 * Runs one stored job, unless it is not waiting any more, already running here, or the runner is
 * stopping: every state transition persisted before it is visible, one more try after a browser
 * crash, a failure stored with a message chosen by its class.
 */
export async function runJob(ctx: JobRunContext, jobId: string): Promise<void> {
  const job = ctx.deps.ends.overlay(await ctx.deps.store.get(jobId));
  // `processing` here is a job recover() could not set back to pending (a full disk).
  if (!job || (job.status !== 'pending' && job.status !== 'processing') || ctx.running.has(jobId) || ctx.isStopping()) {
    // A claimed job that is not run goes back at shutdown (ClusterClaims.handBack); any other is no longer this node's.
    if (!ctx.isStopping() && !ctx.running.has(jobId)) ctx.forgetClaim(jobId);
    return;
  }
  await new JobRun(ctx, job).run();
}

/** One job's run, from `processing` to its end; each step is a method, in the order of run(). */
class JobRun {
  private readonly id: string;
  private readonly log: Logger;
  private readonly controller = new AbortController();
  private readonly deadline: NodeJS.Timeout;
  private readonly started: number;
  private attempts: number;
  private imageFile: string | undefined;
  private hasSource = false;
  private hasEvidence = false;
  private wroteOutputs = false;
  private network: JobNetwork | undefined;
  /** Whether this run stored the job's end, so that it, and only it, announces the end. */
  private endStored = false;
  /** Whether the job ended here (its end stored, or kept for a full disk): its secrets go. */
  private over = false;

  constructor(
    private readonly ctx: JobRunContext,
    private readonly job: JobRecord,
  ) {
    this.id = job._id;
    this.log = ctx.log.child({ job_id: job._id });
    const settings = ctx.deps.settings.get();
    ctx.running.set(job._id, this.controller);
    // A last line of defence; the engine bounds every step on its own.
    this.deadline = setTimeout(
      () => this.controller.abort(new CaptureError('The capture took too long and was stopped')),
      settings.navigation_timeout_ms + settings.capture_timeout_ms + 30_000,
    );
    this.started = ctx.deps.clock.now();
    this.attempts = job.attempts;
  }

  async run(): Promise<void> {
    try {
      this.refuseAfterStops();
      await this.begin();
      const result = await this.captureWithRetry(await this.openSecrets());
      const fileName = await this.storeFiles(result);
      await this.complete(result, fileName);
    } catch (err) {
      await this.removeFiles();
      if (this.controller.signal.reason instanceof ShutdownAbort) {
        await this.requeue();
        return;
      }
      if (err instanceof LeaseLost || this.controller.signal.reason instanceof LeaseLost) {
        this.log.warn('another node took the job over; its end is that node\'s to store');
        return;
      }
      await this.fail(err);
    } finally {
      clearTimeout(this.deadline);
      this.ctx.running.delete(this.id);
      this.ctx.forgetClaim(this.id);
      this.ctx.emit();
    }
    // Erased before the end is announced: a webhook saying the job ended means its secrets are gone.
    if (this.over && this.job.has_secrets) {
      await this.ctx.deps.jobSecrets.remove([this.id]).catch((err: unknown) => this.log.warn({ err }, 'could not erase its secrets; the next start does'));
    }
    if (this.endStored) await this.ctx.deps.ends.announce(this.id);
  }

  /** In cluster mode a write refused for the lease means another node runs the job now. */
  private held(stored: boolean): void {
    if (this.ctx.node !== undefined && !stored) throw new LeaseLost('lease lost');
  }

  /** A job under way each time the service stopped, more often than it is run again, fails now. */
  private refuseAfterStops(): void {
    const starts = this.job.starts ?? 0;
    if (starts > MAX_RUNS_AFTER_A_STOP) throw new StoppedServiceError(starts);
  }

  /** `processing`, counted as a start before anything else, then the egress check of the URL. */
  private async begin(): Promise<void> {
    const starts = (this.job.starts ?? 0) + 1;
    this.held(await this.ctx.update(this.id, { status: 'processing', progress: 10, started_at: this.started, starts }));
    this.log.debug('started');
    this.ctx.emit();
    this.network = await this.ctx.deps.networkOf?.(this.job);
    // A document given as html is never fetched; everything it loads meets the egress proxy.
    if (this.ctx.deps.guard && this.job.url !== HTML_JOB_URL) await this.ctx.deps.guard.checkUrl(this.job.url, this.network?.scope);
  }

  /** The job's sealed secrets and large options, opened; a job whose sealed values are gone or cannot be opened fails saying so. */
  private async openSecrets(): Promise<SealedJobValues> {
    if (!this.job.has_secrets) return {};
    const sealed = await this.ctx.deps.jobSecrets.get(this.id);
    if (sealed === null) {
      const names = this.job.secret_names;
      const secrets = names?.headers.length || names?.cookies.length || names?.http_auth || this.job.url === HTML_JOB_URL;
      const what = names?.options && !secrets ? names.options.join(', ') : 'headers, cookies or credentials';
      throw new CaptureError(`The job's ${what} are no longer kept (a data directory restored from a backup holds none); ask for the screenshot again`);
    }
    try {
      return this.ctx.deps.secrets.open<SealedJobValues>(sealed);
    } catch {
      throw new CaptureError(
        "The job's headers, cookies or credentials could not be read: the data directory's job-secrets.key changed since it was created",
      );
    }
  }

  /**
   * The capture, tried once more after a browser crash (the engine relaunches the browser), and
   * once more when a saved login's session was refused (the login signs in again, or gives the
   * session another job just got).
   */
  private async captureWithRetry(secrets: SealedJobValues): Promise<CaptureResult> {
    let refused: number | undefined;
    for (;;) {
      this.attempts++;
      await this.ctx.update(this.id, { attempts: this.attempts });
      const login = await this.login(refused);
      try {
        return await this.capture(secrets, login?.login);
      } catch (err) {
        if (err instanceof BrowserCrashedError && this.attempts - this.job.attempts < 2 && !this.controller.signal.aborted) {
          this.log.warn('browser crashed, retrying once');
          this.ctx.deps.onRetried?.(err);
          continue;
        }
        if (err instanceof SessionRefusedError && login && refused === undefined && !this.controller.signal.aborted) {
          this.log.info('the saved login\'s session was refused; capturing again with a new one');
          refused = login.version;
          continue;
        }
        throw err;
      } finally {
        login?.done();
      }
    }
  }

  /** The saved login the job names, as its capture takes it; `refused`: the session version a capture was just refused with. */
  private async login(refused: number | undefined): Promise<Awaited<ReturnType<LoginService['forCapture']>> | undefined> {
    const id = this.job.options?.login;
    if (!id) return undefined;
    if (!this.ctx.deps.logins) throw new CaptureError('Saved logins are not available here');
    // A sign-in is part of one capture: it holds the login against other nodes at most that long.
    const settings = this.ctx.deps.settings.get();
    const holdMs = settings.navigation_timeout_ms + settings.capture_timeout_ms;
    return this.ctx.deps.logins.forCapture(this.job.account_id, id, { refused, holdMs, signal: this.controller.signal });
  }

  private capture(secrets: SealedJobValues, login: CaptureLogin | undefined): Promise<CaptureResult> {
    const { deps } = this.ctx;
    const job = this.job;
    const settings = deps.settings.get();
    const { scale, login: _login, ...options } = job.options ?? {};
    const preset = PRESETS[job.device];
    return deps.engine.capture({
      url: job.url,
      preset: scale === undefined ? preset : { ...preset, deviceScaleFactor: scale },
      options: { ...options, ...secrets },
      login,
      viewport: job.viewport ?? undefined,
      fullPage: job.full_page,
      googlebot: job.googlebot,
      format: job.format,
      quality: job.quality ?? undefined,
      maxHeight: settings.full_page_max_height,
      navigationTimeoutMs: settings.navigation_timeout_ms,
      captureTimeoutMs: settings.capture_timeout_ms,
      maxSourceBytes: deps.pageSourceMaxBytes,
      signal: this.controller.signal,
      proxyServer: this.network?.proxyServer,
      // Progress is a hint: one that cannot be stored (a full disk) is simply dropped.
      onProgress: (progress) => {
        this.ctx.update(job._id, { progress }).catch(() => undefined);
      },
    });
  }

  /** The image, its thumbnail, the page source and the extracted outputs; resolves to the image's file name. */
  private async storeFiles(result: CaptureResult): Promise<string> {
    const { files, pageSourceMaxBytes } = this.ctx.deps;
    const fileName = `${newImageToken()}.${result.format === 'jpeg' ? 'jpg' : result.format}`;
    await files.writeImage(fileName, result.image);
    this.imageFile = fileName;
    if (result.format !== 'pdf') {
      // Lists show it; one that cannot be made now is made from the image when first asked for.
      await files.writeThumbnail(fileName, result.image).catch((err: unknown) => this.log.warn({ err }, 'could not make its thumbnail'));
    }
    if (result.html !== null && Buffer.byteLength(result.html) <= pageSourceMaxBytes) {
      this.hasSource = true;
      await files.writeSource(this.id, result.html);
    }
    if (result.exchanges) {
      await files.writeImage(evidenceName(fileName), await this.evidenceOf(result, fileName));
      this.hasEvidence = true;
    }
    return fileName;
  }

  /**
   * The signed WACZ of an `evidence` capture: the exchanges it recorded, the picture, the
   * rendered HTML and its text, and what the job was (its options hold no secret: those are
   * sealed apart, see CAPTURE_OPTIONS), timed by the service's clock.
   */
  private async evidenceOf(result: CaptureResult, fileName: string): Promise<Buffer> {
    const { evidence, clock } = this.ctx.deps;
    if (!evidence) throw new Error('evidence bundles are not set up');
    const job = this.job;
    const capturedAt = clock.now();
    const text = result.extracted?.text ?? (result.html === null ? null : (await htmlToText(result.html, EVIDENCE_TEXT_BOUNDS)).text);
    const metadata = {
      job_id: job._id,
      url: job.url,
      final_url: result.finalUrl,
      captured_at: new Date(capturedAt).toISOString(),
      preset: job.preset,
      full_page: job.full_page,
      format: result.format,
      image: fileName,
      options: job.options ?? {},
      http_status: result.httpStatus,
      page_title: result.pageTitle,
      user_agent: result.userAgent,
      software: evidence.software,
    };
    return packEvidence(
      {
        url: job.url,
        finalUrl: result.finalUrl,
        title: result.pageTitle,
        capturedAt,
        exchanges: result.exchanges ?? [],
        picture: { data: result.image, contentType: IMAGE_CONTENT_TYPES[result.format] },
        html: result.html,
        text,
        metadata,
        software: evidence.software,
      },
      evidence.signer,
    );
  }

  /** Stores the outputs' fields and the job's end as completed; the mean time learns its duration. */
  private async complete(result: CaptureResult, fileName: string): Promise<void> {
    const outputs = await storeOutputs(this.ctx.deps.files, this.id, result);
    this.wroteOutputs = true;
    await this.ctx.update(this.id, { progress: 90 });
    const ended = this.ctx.deps.clock.now();
    this.ctx.measured(this.job.full_page, Math.max(0, ended - this.started - (this.job.options?.delayMs ?? 0)));
    this.endStored = await this.ctx.update(this.id, {
      status: 'completed',
      progress: 100,
      completed_at: ended,
      duration_ms: ended - this.started,
      image_file: fileName,
      has_page_source: this.hasSource,
      ...(this.hasEvidence ? { has_evidence: true } : {}),
      truncated: result.truncated,
      picture_scale: result.pictureScale,
      blocked_requests: result.blockedRequests,
      http_status: result.httpStatus,
      final_url: result.finalUrl,
      page_title: result.pageTitle,
      warnings: result.warnings,
      // `uploaded_to`, or the warnings with upload_failed; the image is stored whatever it says.
      ...(await this.ctx.deps.uploads?.upload(this.job, result, this.controller.signal)),
      ...outputs,
      ...webhookDue(this.job),
    });
    this.held(this.endStored);
    this.over = true;
    this.log.debug({ duration_ms: ended - this.started }, 'completed');
  }

  /** A job that did not complete keeps no files (the image may be whole while its job could not be stored). */
  private async removeFiles(): Promise<void> {
    if (this.imageFile || this.hasSource || this.wroteOutputs) {
      await this.ctx.deps.files.remove(this.imageFile, this.id).catch((e: unknown) => this.log.warn({ err: e }, 'could not remove its files'));
    }
  }

  /** Stopped at shutdown: the job waits again (in cluster mode, for any node); a clean stop is no start to count. */
  private async requeue(): Promise<void> {
    const released = this.ctx.node !== undefined ? { lease_owner: null, lease_until: null } : {};
    await this.ctx.update(this.id, { status: 'pending', progress: 0, attempts: this.job.attempts, starts: this.job.starts ?? 0, ...released });
  }

  /** Stores the job's end as failed, with the message its failure's class gives. */
  private async fail(err: unknown): Promise<void> {
    const signal = this.controller.signal;
    const failure = classifyFailure(err, signal);
    this.ctx.deps.onFailed?.(err, signal);
    if (failure.internal) this.log.error({ err }, `failed: ${failure.message}`);
    else this.log.debug(`failed: ${failure.message}`);
    const ended = this.ctx.deps.clock.now();
    const saved = await this.ctx.deps.ends.save(
      this.id,
      { status: 'failed', progress: 0, completed_at: ended, duration_ms: ended - this.started, error: failure.message, ...webhookDue(this.job) },
      this.ctx.node,
    );
    this.over = saved !== 'lost';
    // A deferred end (a full disk) is announced by EndWriteBehind once it is stored.
    this.endStored = saved === 'stored';
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
