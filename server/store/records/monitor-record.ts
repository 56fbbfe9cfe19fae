// A monitor and its checks as the stores keep them; times are epoch milliseconds.

/** When a monitor runs: a cron expression (5 fields, in `timezone`, UTC by default), or every so many minutes. */
export type MonitorSchedule = { cron: string; timezone?: string } | { every_minutes: number };

/** A rectangle in CSS px. */
export interface RectRecord {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A rectangle of a monitor's pictures left out of the comparison, or (with `tolerance`) counted only past that share of its pixels. */
export interface MaskRectRecord extends RectRecord {
  tolerance?: number;
}

/** Where a check's picture changed against its baseline, in CSS px of each picture. */
export interface CheckRegion {
  kind: 'changed' | 'inserted' | 'removed' | 'moved';
  before: RectRecord | null;
  after: RectRecord | null;
}

/**
 * Where a monitor's events are told besides its signed webhook. The Slack and Teams URLs are
 * secrets (the token is in the path): the record keeps them sealed, and shows only their origin.
 */
export interface MonitorNotify {
  /** Addresses mailed through the admin's SMTP server. */
  email: string[];
  /** A Slack incoming webhook as shown: its origin and `/…`. Of monitors of earlier versions (no `sealed_urls`), the URL itself. */
  slack_url: string | null;
  /** A Microsoft Teams incoming webhook (or a Teams Workflows URL) as shown, as `slack_url`. */
  teams_url: string | null;
  /** The URLs themselves, sealed together (SecretBox) as ChatUrls. Absent when neither is set, and on monitors of earlier versions. */
  sealed_urls?: string;
}

/** A monitor's Slack and Teams URLs in clear, as they are sent to. */
export interface ChatUrls {
  slack_url: string | null;
  teams_url: string | null;
}

/** What a monitor compares each check with: the previous completed check, or the pinned one. */
export type MonitorBaseline = 'previous' | 'pinned';

export interface MonitorRecord {
  /** `mon_` and 24 hex digits. */
  _id: string;
  account_id: string;
  /** The key that created the monitor: its checks are that key's jobs. */
  key_id: string;
  name: string | null;
  /**
   * The capture as POST /v1/screenshot takes it, without its secret fields (headers, cookies,
   * http_auth, html) and the options of `sealed_options`: those are sealed (SecretBox) and kept
   * apart, MonitorStore.secrets.
   */
  request: Record<string, unknown>;
  /** The names of the secret fields the request has (shown instead of their values); none kept apart while this lists some means they are lost. */
  secret_fields: string[];
  /**
   * The capture options (and `mask_selectors`) too large for this record, by name: past about a
   * kilobyte together (RECORD_OPTIONS_BYTES) they are sealed with the secret fields and kept
   * apart as they are, since NeDB appends the whole record at every change, each scheduled run's
   * claim included. Absent (monitors of earlier versions): none.
   */
  sealed_options?: string[];
  schedule: MonitorSchedule;
  /** Fraction of pixels that must differ for a check to count as a change. */
  threshold: number;
  /** Elements painted over in every picture; empty here while they are sealed apart (`sealed_options` names them). */
  mask_selectors: string[];
  /** Rectangles left out of every comparison (or counted past their tolerance). Absent: none. */
  mask_rects?: MaskRectRecord[];
  /**
   * Capture the first baseline twice, a few seconds apart, and propose masks where they differ.
   * A new monitor's is true unless it says otherwise; absent (monitors of earlier versions): false.
   */
  propose_masks?: boolean;
  /** Masks proposed from the first baseline's two captures, to accept or reject; absent until proposed. */
  proposed_masks?: RectRecord[];
  callback_url: string | null;
  /** Absent (monitors of earlier versions): nobody besides callback_url. */
  notify?: MonitorNotify;
  paused: boolean;
  baseline: MonitorBaseline;
  /** The check compared with when `baseline` is `pinned`. */
  pinned_job_id: string | null;
  /** The next scheduled occurrence; null while paused. Claimed by one node with a conditional update. */
  next_run_at: number | null;
  /** True once monitor.failed was sent for the current run of failing checks; a success clears it. */
  failing: boolean;
  /** Inconclusive checks in a row after which the monitor pauses itself. Absent (monitors of earlier versions): 5. */
  pause_after_inconclusive?: number;
  /** Inconclusive checks in a row, up to the newest; a trustworthy check clears it. Absent: 0. */
  inconclusive_streak?: number;
  /** Why the monitor paused itself (five inconclusive checks in a row, …); cleared when it is resumed. Absent: null. */
  paused_reason?: string | null;
  /** The origin the checks' URLs are built from (the creating request's). */
  base_url: string;
  created_at: number;
  updated_at: number;
}

/**
 * pending: the job runs, or its comparison is still to be made; skipped: no job was made (`error`
 * says why); failed: the job failed, or (with no job) the capture could not be made at all.
 */
export type CheckStatus = 'pending' | 'completed' | 'failed' | 'skipped';

/**
 * What a completed check concluded: the first picture (nothing to compare with), changed or
 * unchanged against its baseline, or inconclusive: its capture's warnings say its picture cannot
 * be trusted (INCONCLUSIVE_CODES), so it is compared with nothing and never becomes a baseline.
 */
export type CheckVerdict = 'first' | 'changed' | 'unchanged' | 'inconclusive';

/** Lines of the page's visible text a check added and removed against its baseline's. */
export interface TextChange {
  added: string[];
  removed: string[];
}

export interface CheckRecord {
  /** The job's id; `skip_…` for a check without a job (skipped, or failed before a job was made). */
  _id: string;
  monitor_id: string;
  account_id: string;
  job_id: string | null;
  /** The device of the check's job (a monitor of several devices makes one check per device). */
  device: string;
  at: number;
  status: CheckStatus;
  /** null when nothing was compared (the first check, a failure, a skip). */
  changed: boolean | null;
  difference: number | null;
  /** The job the picture was compared with. */
  baseline_job_id: string | null;
  /** The job's picture, and the diff picture's file (a capability name like the job's). */
  image_file: string | null;
  /** Its picture's image pixels per CSS pixel (the job's picture_scale); absent for checks of earlier versions. */
  picture_scale?: number;
  diff_file: string | null;
  error: string | null;
  /** The scheduled occurrence this check ran for; null for a run asked for. */
  occurrence: number | null;
  /** Of a completed check (absent on checks of earlier versions: read from `changed`). */
  verdict?: CheckVerdict;
  /** Of an inconclusive check: the warning codes that decided it. */
  inconclusive_codes?: string[];
  /** The page's visible text from the same render, bounded (MAX_CHECK_TEXT_CHARS); null when none was read. */
  text?: string | null;
  /** The text lines added and removed against the baseline; null when nothing was compared or the text is the same. */
  text_change?: TextChange | null;
  /** Pixels changed and the text did not (an image, a colour, a layout shift). */
  pixels_only?: boolean;
  /** Where the picture changed, at most MAX_CHECK_REGIONS. Absent: none. */
  regions?: CheckRegion[];
  /** The second capture of a first baseline, taken to propose masks: it sends no event. */
  mask_probe?: boolean;
  /**
   * Of a check without a job (skipped, or failed before its job was made): how many scheduled
   * occurrences in a row it stands for, the latest at `at` and the first at `first_at`; one
   * record per run of them, not one per occurrence. Absent: 1.
   */
  runs?: number;
  first_at?: number;
}
