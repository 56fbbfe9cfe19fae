import type { ImageFormat } from '../../capture/engine.js';
import type { CaptureWarning } from '../../capture/outputs/capture-warnings.js';
import type { PageMetadata } from '../../capture/outputs/extract.js';
import type { DeviceName, PresetName } from '../../capture/presets.js';
import type { JobOptions, SecretNames } from './job-options.js';

export type JobStatus = 'pending' | 'processing' | 'completed' | 'failed';
/** The states a job ends in. */
export type EndStatus = Extract<JobStatus, 'completed' | 'failed'>;

/** Jobs still to run: waiting, or running. */
export const UNFINISHED_STATUSES: readonly JobStatus[] = ['pending', 'processing'];
export const END_STATUSES: readonly EndStatus[] = ['completed', 'failed'];

export function hasEnded(status: JobStatus): status is EndStatus {
  return status === 'completed' || status === 'failed';
}

/** A screenshot job as stored in jobs.db: one device of one request. */
export interface JobRecord {
  _id: string;
  account_id: string;
  key_id: string;
  /** Jobs created by one request share it; a batch's jobs (POST /v1/batches) have the batch's id. */
  batch_id: string;
  /** A batch's job: its item's place in the batch request, from 0 (absent: not a batch's job). */
  batch_index?: number;
  url: string;
  device: DeviceName;
  preset: PresetName;
  full_page: boolean;
  googlebot: boolean;
  viewport: { width: number; height: number } | null;
  format: ImageFormat;
  quality: number | null;
  callback_url: string | null;
  /** Origin the job was created through; absolute addresses in webhooks are built from it. */
  base_url: string;
  status: JobStatus;
  progress: number;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  error: string | null;
  image_file: string | null;
  has_page_source: boolean;
  truncated: boolean;
  /** Image pixels per CSS pixel (CaptureResult.pictureScale); absent for jobs of earlier versions. */
  picture_scale?: number;
  blocked_requests: number;
  attempts: number;
  /**
   * Runs of the job begun: counted as it is stored `processing`, before the capture starts, and
   * set back when a clean stop hands the job back. A job found with starts was under way when its
   * process (or its cluster node) stopped without a word; past MAX_RUNS_AFTER_A_STOP it fails
   * instead of running again. Absent (jobs of earlier versions): 0.
   */
  starts?: number;
  duration_ms: number | null;
  expired: boolean;
  /** The capture options asked for, defaults left out (absent on jobs of earlier versions). */
  options?: JobOptions;
  /**
   * The job was given `headers`, `cookies`, `http_auth` or `html`, or options too large for this
   * record (splitJobOptions): their values wait, sealed, in the JobSecretStore (never in this
   * record) until the job ends.
   */
  has_secrets?: boolean;
  /** Earlier versions kept the sealed secrets here; moved out when the store opens (and left out of backups). */
  sealed_secrets?: string | null;
  /** What may be said of those sealed values: names only. */
  secret_names?: SecretNames | null;
  /** The main document's HTTP status, when it came over HTTP (completed jobs). */
  http_status?: number | null;
  /** The document's address after redirects (completed jobs). */
  final_url?: string | null;
  /** The document's title (completed jobs). */
  page_title?: string | null;
  /** What may be wrong with the picture (completed jobs); absent on jobs of earlier versions, which read as []. */
  warnings?: CaptureWarning[];
  /** With `extract`: which outputs were extracted and stored as files (absent: none). */
  has_markdown?: boolean;
  has_text?: boolean;
  has_links?: boolean;
  /** With `evidence`: the signed WACZ bundle is stored, named after the image (evidenceName). */
  has_evidence?: boolean;
  /** With `extract: links`: the page had more links than were kept. */
  links_truncated?: boolean;
  /** With `extract: metadata`: what the page declares of itself (completed jobs). */
  metadata?: PageMetadata | null;
  /** With `upload` or `storage_path`: where the image was uploaded (absent when the upload failed: see warnings). */
  uploaded_to?: { bucket: string; key: string };
  /** Set when the request asked for a cached result (cache_ttl > 0): see resultCacheKey. */
  cache_key?: string;
  /**
   * The job's turn in the fair order (round-robin by account), given as it is queued: see
   * fairTurns. Jobs run lowest turn first, the older first on a tie. Absent: 0.
   */
  turn?: number;
  /**
   * Set with the job's end when it has a callback_url, cleared once its webhook delivery is
   * stored: an end whose process stopped in between is found by it and its webhook queued then.
   */
  webhook_due?: boolean;
  /** Cluster mode: the node running the job, and until when its claim holds unless renewed. */
  lease_owner?: string | null;
  lease_until?: number | null;
}
