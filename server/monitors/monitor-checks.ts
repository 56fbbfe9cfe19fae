import crypto from 'node:crypto';

import type { CaptureWarning } from '../capture/outputs/capture-warnings.js';
import { PRESETS } from '../capture/presets.js';
import { ValidationError } from '../domain-errors.js';
import type { CreateParams } from '../jobs/create-params.js';
import { screenshotUrl } from '../jobs/job-resource.js';
import type { JobService } from '../jobs/job-service.js';
import type { Logger } from '../logger.js';
import { SerialByKey } from '../serial-by-key.js';
import type { FileStore } from '../store/file-store.js';
import type { AccountRecord } from '../store/records/account-record.js';
import { hasEnded, type JobRecord } from '../store/records/job-record.js';
import type { ChatUrls, CheckRecord, CheckRegion, CheckVerdict, MonitorRecord, TextChange } from '../store/records/monitor-record.js';
import type { AccountStore, KeyStore, MonitorStore } from '../store/stores.js';
import { type Clock, formatIsoSeconds } from '../time.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import type { MonitorEvent } from './monitor-event.js';
import { MonitorSecretsLostError } from './monitor-secrets-lost.js';
import type { ChatNotifier } from './notify-chat.js';
import type { EmailNotifier } from './notify-email.js';
import { comparePictures } from './picture-diff.js';
import { proposeMasks } from './proposed-masks.js';
import { keptText, textChange } from './text-change.js';

/** Charges an account for `count` new jobs around their creation (QuotaService.chargeFor). */
export type ChargeAccount = (account: AccountRecord, count: number, create: () => Promise<JobRecord[]>) => Promise<JobRecord[]>;

export interface MonitorChecksDeps {
  store: MonitorStore;
  accounts: AccountStore;
  keys: KeyStore;
  jobs: JobService;
  files: FileStore;
  webhooks: WebhookService;
  charge: ChargeAccount;
  /** The monitor's capture as the jobs take it, its mask selectors with it (its stored request with its sealed values opened); MonitorSecretsLostError when they are not kept. */
  paramsOf: (monitor: MonitorRecord) => Promise<CreateParams>;
  clock: Clock;
  log: Logger;
  /** Sends the events to the monitors' Slack and Teams URLs. @default none: the webhook alone */
  chat?: ChatNotifier;
  /** A monitor's Slack and Teams URLs opened from their seal; MonitorSecretsLostError when they cannot be. */
  chatUrlsOf: (monitor: MonitorRecord) => ChatUrls;
  /** Mails the events to the monitors' notify.email addresses. @default none */
  email?: EmailNotifier;
}

/**
 * The warning codes that make a check's picture untrustworthy: it shows nothing (blank), a part
 * (truncated), an error or sign-in page instead of the page (http_error, login_page), a page
 * still drawing (not_settled, placeholders), or its text in another font than the page's
 * (fonts_not_loaded: a face is fetched only for text the page lays out, and a fallback font has
 * other widths, so lines break elsewhere and everything below them moves). A check with any of
 * them is inconclusive; with images_not_loaded, only past MISSING_IMAGES_SHARE. Overlays, console
 * errors and a busy network are not in it: they are common on pages whose picture is still the
 * page, and a change they make is compared as any other.
 */
export const INCONCLUSIVE_CODES: readonly string[] = ['blank', 'truncated', 'http_error', 'login_page', 'not_settled', 'placeholders', 'fonts_not_loaded'];

/**
 * Missing images make a check inconclusive once they take more than this share of the area of
 * the images in its picture: a broken avatar or tracking pixel among many is a small change,
 * compared as any other (the diff shows it); a quarter of the pictures gone, or a missing hero
 * image, is a page that did not load, which would alert as changed and then become the baseline.
 */
export const MISSING_IMAGES_SHARE = 0.25;

/** The codes of the warnings that make a capture's picture untrustworthy, once each, in their order. */
export function inconclusiveCodes(warnings: readonly CaptureWarning[]): string[] {
  const untrustworthy = (w: CaptureWarning) =>
    INCONCLUSIVE_CODES.includes(w.code) || (w.code === 'images_not_loaded' && (w.detail?.missing_share ?? 0) > MISSING_IMAGES_SHARE);
  return [...new Set(warnings.filter(untrustworthy).map((w) => w.code))];
}

/** A monitor pauses itself after this many inconclusive checks in a row unless it says otherwise. */
export const DEFAULT_PAUSE_AFTER_INCONCLUSIVE = 5;

/** Change regions a check keeps and tells at most (the diff picture shows them all). */
export const MAX_CHECK_REGIONS = 50;

/** Time between the two captures of a first baseline whose differences are proposed as masks. */
export const MASK_PROBE_DELAY_MS = 2_000;

/** Inconclusive checks passed over at most while looking for a baseline. */
const MAX_SKIPPED_BASELINES = 50;

/** Pending checks looked at per recovery pass. */
const RECOVER_BATCH = 200;

/** The diff picture of a check: next to the job's picture, under the same capability name. */
export const diffFileOf = (imageFile: string) => `${imageFile.replace(/\.[a-z]+$/, '')}.diff.png`;
export const diffUrl = (baseUrl: string, imageFile: string) => `${screenshotUrl(baseUrl, imageFile)}/diff`;

/** Why a check cannot be made whoever asks: its account or its key is gone (a ValidationError to a caller asking for a run). */
class SkipReason extends ValidationError {}

/**
 * The checks of monitors: each an ordinary job made through the JobService (counted as a call,
 * with its status URL, expiring with retention), and once it ends, its comparison with the
 * baseline, its diff picture and its webhooks. A check is stored `pending` when its job is made
 * and settled once (a conditional update from `pending`), so an end seen twice (the end's
 * announcement and a start's recovery) is compared once.
 */
export class MonitorChecks {
  /** One monitor's comparisons take turns, in the order their jobs end. */
  private readonly turns = new SerialByKey();
  /** Comparisons under way, which stop() waits for. */
  private readonly settling = new Set<Promise<void>>();
  private stopped = false;
  /** Second captures of first baselines waiting for their time, by monitor (one for all its devices); stop() cancels them. */
  private readonly probes = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: MonitorChecksDeps) {}

  /**
   * Makes the jobs of one check (one per device). A scheduled check (`occurrence`) that is
   * refused (a limit, a full queue, its key revoked) is recorded `skipped` with the reason, and
   * one whose monitor's secrets are lost `failed` saying so, and returns []; a check asked for
   * (POST …/run) throws the refusal to its caller. Occurrences in a row that make no job share one
   * record (`runs`), so a monitor refused all day stores one check, not one a minute. A check
   * asked for with a key (`keyId`, the caller's) is a job of that key, a scheduled one of the
   * monitor's. The monitor of an account that is gone is paused.
   */
  async start(monitor: MonitorRecord, occurrence: number | null, keyId = monitor.key_id, maskProbe = false): Promise<JobRecord[]> {
    let jobs: JobRecord[];
    try {
      const account = await this.deps.accounts.get(monitor.account_id);
      if (!account) {
        await this.deps.store.update(monitor._id, { paused: true, next_run_at: null });
        throw new SkipReason('the account of this monitor is gone; the monitor is paused', 'id');
      }
      const key = await this.deps.keys.get(keyId);
      if (!key || key.revoked) throw new SkipReason('the API key that created this monitor is revoked; create the monitor again with another key', 'id');
      const params = { ...(await this.deps.paramsOf(monitor)), callback_url: null, cache_ttl: 0 };
      const requested = await this.deps.jobs.request(account._id, key._id, params, monitor.base_url, (count, create) => this.deps.charge(account, count, create));
      jobs = requested.map((r) => r.job);
    } catch (err) {
      if (occurrence === null) throw err;
      const reason = (err as Error).message;
      if (err instanceof MonitorSecretsLostError) {
        await this.recordWithoutJob(monitor, 'failed', occurrence, reason);
        this.deps.log.warn({ monitor_id: monitor._id }, `a scheduled check failed: ${reason}`);
      } else {
        await this.recordWithoutJob(monitor, 'skipped', occurrence, reason);
        this.deps.log.info({ monitor_id: monitor._id }, `a scheduled check was skipped: ${reason}`);
      }
      return [];
    }
    for (const job of jobs) {
      await this.deps.store.insertCheck({
        _id: job._id,
        monitor_id: monitor._id,
        account_id: monitor.account_id,
        job_id: job._id,
        device: job.device,
        at: job.created_at,
        status: 'pending',
        changed: null,
        difference: null,
        baseline_job_id: null,
        image_file: null,
        diff_file: null,
        error: null,
        occurrence,
        ...(maskProbe ? { mask_probe: true } : {}),
      });
      // The job may have ended before its check was stored: its end found no check then.
      const now = await this.deps.jobs.find(job._id);
      if (now && hasEnded(now.status)) this.jobEnded(now);
    }
    return jobs;
  }

  /**
   * Called once a job's end is stored (on the node that ran it): settles its check, if it is one.
   * Not awaited; a failure is logged. After stop() the check stays pending, compared at the next
   * start (recover).
   */
  jobEnded(job: JobRecord): void {
    if (this.stopped) return;
    const settling = this.settle(job)
      .catch((err: unknown) => this.deps.log.error({ job_id: job._id, err }, 'could not compare the check; it is compared again at the next start'))
      .finally(() => this.settling.delete(settling));
    this.settling.add(settling);
  }

  /**
   * Takes no more ends and waits for the comparisons under way, so none writes a diff picture or a
   * check once the stores close.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const probe of this.probes.values()) clearTimeout(probe);
    this.probes.clear();
    await Promise.all([...this.settling]);
  }

  /** Settles the checks a stop left pending whose jobs have ended since. Returns how many it settled. */
  async recover(): Promise<number> {
    let settled = 0;
    for (const check of await this.deps.store.pendingChecks(RECOVER_BATCH)) {
      const job = check.job_id ? await this.deps.jobs.find(check.job_id) : null;
      if (!job) {
        await this.deps.store.updateCheck(check._id, 'pending', { status: 'failed', error: 'the job of this check is gone' });
        settled++;
      } else if (hasEnded(job.status)) {
        await this.settle(job);
        settled++;
      }
    }
    return settled;
  }

  /**
   * Removes the checks made before `cutoff` (the history period: their jobs are gone too), and
   * the diff pictures they still name. Returns how many checks it removed.
   */
  async purgeBefore(cutoff: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const old = await this.deps.store.removeChecksBefore(cutoff, RECOVER_BATCH);
      for (const check of old) if (check.diff_file) await this.deps.files.removeImage(check.diff_file);
      removed += old.length;
      if (old.length < RECOVER_BATCH) return removed;
    }
  }

  /**
   * Removes the diff pictures of checks made before `cutoff` (their screenshots are past the
   * retention period, so the diff URL answers 404 already). Returns how many it removed.
   */
  async sweepDiffs(cutoff: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const old = await this.deps.store.diffsBefore(cutoff, RECOVER_BATCH);
      for (const check of old) {
        await this.deps.files.removeImage(check.diff_file!);
        await this.deps.store.updateCheck(check._id, check.status, { diff_file: null });
      }
      removed += old.length;
      if (old.length < RECOVER_BATCH) return removed;
    }
  }

  /** A scheduled occurrence that made no job: the monitor's newest check when that is one like it (counted in `runs`), else a new check. */
  private async recordWithoutJob(monitor: MonitorRecord, status: 'skipped' | 'failed', occurrence: number, reason: string): Promise<void> {
    const at = this.deps.clock.now();
    const [last] = await this.deps.store.checks(monitor._id, { limit: 1 });
    if (last && last.job_id === null && last.status === status) {
      const change = { at, occurrence, error: reason, runs: (last.runs ?? 1) + 1, first_at: last.first_at ?? last.at };
      if (await this.deps.store.updateCheck(last._id, status, change)) return;
    }
    await this.deps.store.insertCheck(withoutJob(monitor, status, at, occurrence, reason));
  }

  private async settle(job: JobRecord): Promise<void> {
    const check = await this.deps.store.getCheck(job._id);
    if (!check || check.status !== 'pending') return;
    await this.turns.run(check.monitor_id, async () => {
      const monitor = await this.deps.store.get(check.monitor_id);
      if (job.status === 'failed') return this.failed(monitor, check, job);
      if (job.status === 'completed') return this.completed(monitor, check, job);
    });
  }

  private async failed(monitor: MonitorRecord | null, check: CheckRecord, job: JobRecord): Promise<void> {
    const error = job.error ?? 'The capture failed';
    if (!(await this.deps.store.updateCheck(check._id, 'pending', { status: 'failed', error }))) return;
    // Once per run of failures: a success clears `failing`.
    if (!monitor || monitor.failing) return;
    await this.deps.store.update(monitor._id, { failing: true });
    await this.notify(monitor, job, 'monitor.failed', { difference: null, baseline: null, diff: null, error });
  }

  private async completed(monitor: MonitorRecord | null, check: CheckRecord, job: JobRecord): Promise<void> {
    const text = job.has_text ? await this.deps.files.readOutput(job._id, 'text') : null;
    const kept = text === null ? null : keptText(text);
    const codes = inconclusiveCodes(job.warnings ?? []);
    if (codes.length) return this.inconclusive(monitor, check, job, codes, kept);
    const baseline = monitor ? await this.baselineOf(monitor, check) : null;
    let difference: number | null = null;
    let diffFile: string | null = null;
    let regions: CheckRegion[] = [];
    const scale = pictureScale(job);
    const picture = job.image_file ? await this.deps.files.readImage(job.image_file) : null;
    const before = baseline?.image_file ? await this.deps.files.readImage(baseline.image_file) : null;
    if (picture && before && job.image_file) {
      const found = await comparePictures(before, picture, { masks: monitor?.mask_rects ?? [], scale });
      difference = found.difference;
      regions = found.regions.slice(0, MAX_CHECK_REGIONS);
      if (found.diff) {
        diffFile = diffFileOf(job.image_file);
        await this.deps.files.writeImage(diffFile, found.diff);
      }
    }
    const changed = difference === null || !monitor ? null : difference > monitor.threshold;
    const compared = difference !== null;
    // Both texts are needed to say anything of it (a baseline of an earlier version kept none).
    const textCompared = compared && kept !== null && typeof baseline!.text === 'string';
    const text_change = textCompared ? textChange(baseline!.text!, kept) : null;
    const verdict: CheckVerdict = changed === null ? 'first' : changed ? 'changed' : 'unchanged';
    const findings = { verdict, inconclusive_codes: [], text_change, pixels_only: Boolean(changed) && textCompared && text_change === null, regions };
    const settled = await this.deps.store.updateCheck(check._id, 'pending', {
      status: 'completed',
      changed,
      difference,
      baseline_job_id: compared ? baseline!._id : null,
      image_file: job.image_file,
      picture_scale: scale,
      diff_file: diffFile,
      text: kept,
      ...findings,
    });
    if (!settled || !monitor) return;
    if (monitor.failing || monitor.inconclusive_streak) await this.deps.store.update(monitor._id, { failing: false, inconclusive_streak: 0 });
    if (verdict === 'first' && monitor.propose_masks && monitor.proposed_masks === undefined) this.probeLater(monitor, job.key_id);
    if (check.mask_probe) {
      if (picture && before) await this.deps.store.update(monitor._id, { proposed_masks: await proposeMasks(before, picture, { scale }) });
      return;
    }
    if (changed) await this.notify(monitor, job, 'monitor.changed', { difference, baseline, diff: diffFile ? job.image_file : null, error: null, ...findings });
  }

  /** Tells the monitor's Slack and Teams URLs; URLs that cannot be opened any more are logged, and the other notifications still go. */
  private async tellChat(chat: ChatNotifier, monitor: MonitorRecord, event: MonitorEvent): Promise<void> {
    let urls: ChatUrls;
    try {
      urls = this.deps.chatUrlsOf(monitor);
    } catch (err) {
      this.deps.log.warn({ monitor_id: monitor._id }, `could not tell Slack or Teams: ${(err as Error).message}`);
      return;
    }
    await chat.send(monitor, urls, event);
  }

  /** Takes the first baseline's second capture MASK_PROBE_DELAY_MS from now, as a run asked for; a refusal is logged. */
  private probeLater(monitor: MonitorRecord, keyId: string): void {
    if (this.probes.has(monitor._id)) return;
    const probe = setTimeout(() => {
      this.probes.delete(monitor._id);
      if (this.stopped) return;
      this.start(monitor, null, keyId, true).catch((err: unknown) =>
        this.deps.log.info({ monitor_id: monitor._id, err: (err as Error).message }, 'could not capture the first baseline again to propose masks'),
      );
    }, MASK_PROBE_DELAY_MS);
    this.probes.set(monitor._id, probe);
  }

  /**
   * A check whose picture its warnings say cannot be trusted: compared with nothing, never a
   * baseline (baselineOf passes over it), monitor.inconclusive sent at the first of a run of them,
   * and the monitor paused at the pause_after_inconclusive-th in a row.
   */
  private async inconclusive(monitor: MonitorRecord | null, check: CheckRecord, job: JobRecord, codes: string[], text: string | null): Promise<void> {
    const findings = { verdict: 'inconclusive' as const, inconclusive_codes: codes, text_change: null, pixels_only: false, regions: [] };
    const settled = await this.deps.store.updateCheck(check._id, 'pending', {
      status: 'completed',
      changed: null,
      difference: null,
      baseline_job_id: null,
      image_file: job.image_file,
      picture_scale: pictureScale(job),
      diff_file: null,
      text,
      ...findings,
    });
    if (!settled || !monitor) return;
    const streak = (monitor.inconclusive_streak ?? 0) + 1;
    const limit = monitor.pause_after_inconclusive ?? DEFAULT_PAUSE_AFTER_INCONCLUSIVE;
    const change: Partial<MonitorRecord> = { inconclusive_streak: streak, failing: false };
    if (streak >= limit && !monitor.paused) {
      Object.assign(change, {
        paused: true,
        next_run_at: null,
        paused_reason: `${streak === 1 ? 'An inconclusive check' : `${streak} inconclusive checks in a row`} (${codes.join(', ')}): the pictures could not be trusted. Resume the monitor once the page is fixed.`,
      });
      this.deps.log.warn({ monitor_id: monitor._id, codes }, `the monitor paused itself after ${streak} inconclusive check(s) in a row`);
    }
    await this.deps.store.update(monitor._id, change);
    if (streak === 1) await this.notify(monitor, job, 'monitor.inconclusive', { difference: null, baseline: null, diff: null, error: null, ...findings });
  }

  /**
   * The pinned check when the monitor compares with one (of this device), else the previous
   * completed check that is not inconclusive (up to MAX_SKIPPED_BASELINES of those are passed over).
   */
  private async baselineOf(monitor: MonitorRecord, check: CheckRecord): Promise<CheckRecord | null> {
    if (monitor.baseline === 'pinned' && monitor.pinned_job_id && monitor.pinned_job_id !== check._id) {
      const pinned = await this.deps.store.getCheck(monitor.pinned_job_id);
      if (pinned && pinned.status === 'completed' && pinned.device === check.device && pinned.verdict !== 'inconclusive') return pinned;
    }
    let before = { at: check.at, id: check._id };
    for (let skipped = 0; skipped <= MAX_SKIPPED_BASELINES; skipped++) {
      const last = await this.deps.store.lastCompleted(monitor._id, check.device, before);
      if (!last || last.verdict !== 'inconclusive') return last;
      before = { at: last.at, id: last._id };
    }
    return null;
  }

  private async notify(
    monitor: MonitorRecord,
    job: JobRecord,
    type: 'monitor.changed' | 'monitor.inconclusive' | 'monitor.failed',
    found: {
      difference: number | null;
      baseline: CheckRecord | null;
      /** The image whose diff was stored. */
      diff: string | null;
      error: string | null;
      verdict?: CheckVerdict | null;
      inconclusive_codes?: string[];
      text_change?: TextChange | null;
      pixels_only?: boolean;
      regions?: CheckRegion[];
    },
  ): Promise<void> {
    const base = monitor.base_url;
    const data: MonitorEvent['data'] = {
      // What was said differently first: it is what the person who set up the monitor reads.
      verdict: found.verdict ?? null,
      text_change: found.text_change ?? null,
      pixels_only: found.pixels_only ?? false,
      inconclusive_codes: found.inconclusive_codes ?? [],
      regions: found.regions ?? [],
      monitor_id: monitor._id,
      name: monitor.name,
      url: job.url,
      job_id: job._id,
      at: formatIsoSeconds(job.created_at),
      difference: found.difference,
      threshold: monitor.threshold,
      screenshot_url: job.image_file ? screenshotUrl(base, job.image_file) : null,
      baseline_screenshot_url: found.baseline?.image_file ? screenshotUrl(base, found.baseline.image_file) : null,
      diff_url: found.diff ? diffUrl(base, found.diff) : null,
      error: found.error,
    };
    if (monitor.callback_url) await this.deps.webhooks.notify({ job_id: job._id, account_id: monitor.account_id, callback_url: monitor.callback_url }, type, data);
    if (this.deps.chat && (monitor.notify?.slack_url || monitor.notify?.teams_url)) await this.tellChat(this.deps.chat, monitor, { type, data });
    if (this.deps.email && monitor.notify?.email.length) {
      const diff = found.diff ? await this.deps.files.readImage(diffFileOf(found.diff)) : null;
      await this.deps.email.send(monitor, { type, data }, { diff });
    }
  }
}

function withoutJob(monitor: MonitorRecord, status: 'skipped' | 'failed', at: number, occurrence: number, reason: string): CheckRecord {
  return {
    _id: `skip_${crypto.randomBytes(12).toString('hex')}`,
    monitor_id: monitor._id,
    account_id: monitor.account_id,
    job_id: null,
    device: 'desktop',
    at,
    status,
    changed: null,
    difference: null,
    baseline_job_id: null,
    image_file: null,
    diff_file: null,
    error: reason,
    occurrence,
  };
}

/** Picture pixels per CSS pixel of a check's job: its `scale`, else its device's; regions and masks are in CSS px. */
function pictureScale(job: JobRecord): number {
  // Jobs of earlier versions did not record it: their scale, or their device's (wrong only for a resized picture).
  return job.picture_scale ?? job.options?.scale ?? PRESETS[job.device].deviceScaleFactor;
}
