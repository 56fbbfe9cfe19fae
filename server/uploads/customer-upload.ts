import { Upload } from '@aws-sdk/lib-storage';

import { CaptureError, type CaptureResult, type ImageFormat } from '../capture/engine.js';
import type { CaptureWarning } from '../capture/outputs/capture-warnings.js';
import { EgressDeniedError, type EgressPolicy,HostLookupTimeoutError, HostNotFoundError } from '../egress/policy.js';
import type { Logger } from '../logger.js';
import type { JobRecord } from '../store/records/job-record.js';
import { utcDay } from '../time.js';
import type { StorageDestinations } from './destinations.js';
import { guardedS3Client, type OutgoingRoute, type S3Timeouts } from './guarded-s3.js';
import { objectKey } from './storage-path.js';

const CONTENT_TYPES: Record<ImageFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' };
/** {ext}: the image file's own extension. */
const EXTENSIONS: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp', pdf: 'pdf' };

/** Parts of a multipart upload (the SDK's smallest); an image below it goes in one PUT. */
const PART_BYTES = 5 * 1024 * 1024;
/** Longest an upload may take, from the egress check to the last part. @default 120000 */
const UPLOAD_TIMEOUT_MS = 120_000;

export interface CustomerUploadsDeps {
  destinations: StorageDestinations;
  /** The egress guard every connection of the service goes through. */
  policy: EgressPolicy;
  log: Logger;
  /** @default 120000 */
  timeoutMs?: number;
  timeouts?: S3Timeouts;
  /** The authorities a destination's certificate may come from, and the company's proxy. @default Node's roots, direct */
  route?: OutgoingRoute;
}

/** What an upload adds to a completed job: where the image went, or the warning saying why it did not. */
export type UploadOutcome = Pick<JobRecord, 'uploaded_to' | 'warnings'>;

/**
 * Uploads a completed job's image to its account's storage destination when the request asked
 * for it (`upload`, `storage_path`), after the image is stored. A failed upload never fails
 * the job nor loses the picture: it is an `upload_failed` warning saying why.
 */
export class CustomerUploads {
  private readonly log: Logger;

  constructor(private readonly deps: CustomerUploadsDeps) {
    this.log = deps.log.child({ component: 'uploads' });
  }

  /**
   * The job's upload, when asked for: `{uploaded_to}`, or `{warnings}` (the capture's and
   * upload_failed); `{}` for a job that asked for none. `signal` is the job's: aborted for a
   * shutdown or a lost lease, the upload stops and that reason is thrown; aborted because the
   * job's time ran out (a CaptureError), the upload stops with a warning.
   */
  async upload(job: JobRecord, result: CaptureResult, signal?: AbortSignal): Promise<Partial<UploadOutcome>> {
    if (!job.options?.upload) return {};
    try {
      return { uploaded_to: await this.put(job, result, signal) };
    } catch (err) {
      // Stopped with its job (a shutdown, a lease lost to another node): the job's run goes on as
      // it does for any step so stopped. Its time running out (a CaptureError) is only this upload's failure.
      if (signal?.aborted && !(signal.reason instanceof CaptureError)) throw signal.reason;
      const message = failureMessage(err, signal);
      this.log.warn({ job_id: job._id, reason: message }, 'upload to the storage destination failed');
      return { warnings: [...result.warnings, { code: 'upload_failed', message } satisfies CaptureWarning] };
    }
  }

  private async put(job: JobRecord, result: CaptureResult, signal?: AbortSignal): Promise<{ bucket: string; key: string }> {
    const destination = await this.opened(job.account_id);
    const { record } = destination;
    const key = objectKey(record.prefix, job.options?.storagePath, {
      job_id: job._id,
      device: job.device,
      date: utcDay(job.created_at),
      ext: EXTENSIONS[result.format],
    });
    const timeout = AbortSignal.timeout(this.deps.timeoutMs ?? UPLOAD_TIMEOUT_MS);
    const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const s3 = await guardedS3Client(destination, this.deps.policy, this.deps.timeouts, this.deps.route);
    // A stop cuts the connections at once (the SDK's PUT and parts take no signal of their own).
    const cut = () => s3.close();
    stop.addEventListener('abort', cut, { once: true });
    try {
      const upload = new Upload({
        client: s3.client,
        params: { Bucket: record.bucket, Key: key, Body: result.image, ContentType: CONTENT_TYPES[result.format] },
        partSize: PART_BYTES,
        queueSize: 2,
        abortController: abortControllerOf(stop),
      });
      await upload.done();
      return { bucket: record.bucket, key };
    } catch (err) {
      if (timeout.aborted) throw new UploadFailure(`no answer within ${(this.deps.timeoutMs ?? UPLOAD_TIMEOUT_MS) / 1000} s`);
      throw err;
    } finally {
      stop.removeEventListener('abort', cut);
      s3.close();
    }
  }

  private async opened(accountId: string) {
    let destination;
    try {
      destination = await this.deps.destinations.open(accountId);
    } catch {
      throw new UploadFailure("the destination's credentials could not be read: the data directory's job-secrets.key changed since they were set");
    }
    if (!destination) throw new UploadFailure('the account has no storage destination any more');
    return destination;
  }
}

/** Why an upload failed, in words that may be shown to the account (no credentials, no internals). */
class UploadFailure extends Error {
  override readonly name = 'UploadFailure';
}

/** The SDK's Upload takes an AbortController; this one follows `signal`. */
function abortControllerOf(signal: AbortSignal): AbortController {
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  return controller;
}

/** The warning's message: the guard's refusal, the name not found, or the destination's answer. */
function failureMessage(err: unknown, signal: AbortSignal | undefined): string {
  const prefix = 'The image was not uploaded to the storage destination';
  if (err instanceof UploadFailure) return `${prefix}: ${err.message}`;
  if (signal?.aborted) return `${prefix}: the job's time ran out during the upload`;
  if (err instanceof EgressDeniedError) return `${prefix}: its endpoint is ${err.message}`;
  if (err instanceof HostNotFoundError || err instanceof HostLookupTimeoutError) return `${prefix}: ${err.message}`;
  const e = err as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (status) return `${prefix}: it answered ${status} ${e.name ?? ''}`.trimEnd() + (e.message && e.message !== e.name ? ` (${e.message})` : '');
  return `${prefix}: ${e.code ?? e.name ?? 'error'}${e.message ? `: ${e.message}` : ''}`;
}
