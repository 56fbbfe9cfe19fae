import crypto from 'node:crypto';

import { httpUrl } from '../contract/http-url.js';
import { MONITOR_CAPTURE_FIELDS, MonitorRequest, MonitorUpdate } from '../contract/monitors.js';
import { validateBody } from '../contract/validate.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { NotFoundError, ValidationError } from '../domain-errors.js';
import type { CreateParams } from '../jobs/create-params.js';
import { keepWhileFits, RUN_ONLY_FIELDS } from '../store/records/job-options.js';
import type { JobRecord } from '../store/records/job-record.js';
import type { ChatUrls, CheckRecord, MonitorNotify, MonitorRecord, MonitorSchedule } from '../store/records/monitor-record.js';
import type { MonitorStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import type { MonitorChecks } from './monitor-checks.js';
import { MonitorSecretsLostError } from './monitor-secrets-lost.js';
import { checkSchedule, nextOccurrence } from './schedule.js';

/** Rectangle masks a monitor keeps at most (as mask_rects takes). */
const MAX_MASK_RECTS = 100;

/** A monitor's notify as a request gives it. */
type MonitorNotifyInput = NonNullable<MonitorRequest['notify']>;

/** The fields of notify that are secrets: the chat URLs, sealed in the record (the URLs checked as a callback_url is; the egress policy decides at each send). */
const CHAT_URL_FIELDS = ['slack_url', 'teams_url'] as const;

/** Capture fields whose values are kept sealed and never shown: as for a job's secrets. */
const SECRET_FIELDS = ['headers', 'cookies', 'http_auth', 'html'] as const;

export interface MonitorServiceDeps {
  store: MonitorStore;
  checks: MonitorChecks;
  /** Seals the secret capture fields of a monitor. */
  secrets: SecretBox;
  /** A capture request (a POST /v1/screenshot body) as jobs take it; throws ValidationError naming the field. */
  parseCapture: (body: Record<string, unknown>) => CreateParams;
  /** The admin's floor on a schedule's interval, minutes. */
  minMinutes: () => number;
  /** The most monitors one account may have (the monitors_per_account setting). */
  maxPerAccount: () => number;
  clock: Clock;
}

/** Who acts: the account, and the key whose jobs the checks are. */
export interface MonitorOwner {
  account_id: string;
  key_id: string;
}

const newMonitorId = () => `mon_${crypto.randomBytes(12).toString('hex')}`;

/** The names of all a monitor keeps sealed apart from its record: its secret fields, and the options too large for the record. */
const sealedNames = (monitor: Pick<MonitorRecord, 'secret_fields' | 'sealed_options'>) => [...monitor.secret_fields, ...(monitor.sealed_options ?? [])];

/** What a monitor's record keeps of its capture and mask selectors, and the rest sealed (null: nothing is). */
type SplitMonitor = Pick<MonitorRecord, 'request' | 'secret_fields' | 'sealed_options' | 'mask_selectors'> & { sealed: string | null };

/**
 * Monitors: a screenshot request on a schedule (MonitorScheduler runs them), whose checks
 * (MonitorChecks) are compared with a baseline. An account sees only its own monitors: another
 * account's is NotFoundError, as is a job of another account.
 */
export class MonitorService {
  constructor(private readonly deps: MonitorServiceDeps) {}

  /** A new monitor of the owner's account; refused (ValidationError) when the account has the most it may have. */
  async create(owner: MonitorOwner, body: unknown, baseUrl: string): Promise<MonitorRecord> {
    const input = validateBody(MonitorRequest, structuredClone(body)) as MonitorRequest &
      Required<Pick<MonitorRequest, 'threshold' | 'mask_selectors' | 'paused' | 'baseline' | 'pause_after_inconclusive' | 'propose_masks'>>;
    const now = this.deps.clock.now();
    const { sealed, ...kept } = this.split(this.checkCapture(captureOf(body as Record<string, unknown>)), input.mask_selectors);
    checkSchedule(input.schedule, this.deps.minMinutes(), now);
    const monitor: MonitorRecord = {
      _id: newMonitorId(),
      account_id: owner.account_id,
      key_id: owner.key_id,
      name: input.name ?? null,
      ...kept,
      schedule: input.schedule,
      threshold: input.threshold,
      callback_url: input.callback_url ? httpUrl('callback_url', input.callback_url) : null,
      notify: this.notifyOf(input.notify ?? {}),
      mask_rects: input.mask_rects ?? [],
      propose_masks: input.propose_masks,
      paused: input.paused,
      baseline: input.baseline,
      pinned_job_id: null,
      next_run_at: input.paused ? null : nextOccurrence(input.schedule, now),
      failing: false,
      pause_after_inconclusive: input.pause_after_inconclusive,
      base_url: baseUrl,
      created_at: now,
      updated_at: now,
    };
    const max = this.deps.maxPerAccount();
    if (!(await this.deps.store.insert(monitor, sealed, max))) {
      throw new ValidationError(`This account has ${max} monitors, the most one account may have (monitors_per_account); remove one to create another`);
    }
    return monitor;
  }

  list(accountId: string): Promise<MonitorRecord[]> {
    return this.deps.store.list(accountId);
  }

  /** Any account's monitor (the admin's view), or NotFoundError. */
  async find(id: string): Promise<MonitorRecord> {
    const monitor = typeof id === 'string' && id.length <= 64 ? await this.deps.store.get(id) : null;
    if (!monitor) throw new NotFoundError('monitor', id);
    return monitor;
  }

  /** The account's monitor, or NotFoundError (also for another account's). */
  async get(accountId: string, id: string): Promise<MonitorRecord> {
    const monitor = typeof id === 'string' && id.length <= 64 ? await this.deps.store.get(id) : null;
    if (!monitor || monitor.account_id !== accountId) throw new NotFoundError('monitor', id);
    return monitor;
  }

  /**
   * Changes the fields given. Capture fields given replace the monitor's (`url` and `html`
   * replace each other), the result checked as a new request would be; a new schedule, or a
   * resume, starts counting from now. Secret fields replaced leave no copy of the old values; of
   * a monitor whose sealed values are lost, a change of its capture or mask selectors must give
   * them again.
   */
  async update(accountId: string, id: string, body: unknown): Promise<MonitorRecord> {
    const monitor = await this.get(accountId, id);
    const given = body as Record<string, unknown>;
    // The schema's defaults are a new monitor's: a change keeps every field it does not give (a PATCH of a name resumed a paused monitor).
    const validated = validateBody(MonitorUpdate, structuredClone(body)) as Partial<MonitorRequest>;
    const input = Object.fromEntries(Object.entries(validated).filter(([field]) => field in given)) as Partial<MonitorRequest>;
    const now = this.deps.clock.now();
    const change: Partial<MonitorRecord> = { updated_at: now };
    const captureGiven = captureOf(given);
    let sealed: string | null | undefined;
    // Both may be sealed apart, with the secrets: a change of either splits the monitor again.
    if (Object.keys(captureGiven).length || input.mask_selectors !== undefined) {
      const opened = await this.openSealed(monitor);
      const { capture: current, maskSelectors } = unsplit(monitor, typeof opened === 'string' ? {} : opened);
      const dropped = [...('url' in captureGiven ? ['html', 'base_url'] : []), ...('html' in captureGiven ? ['url'] : [])];
      for (const field of dropped) delete current[field];
      const given = (field: string) => field in captureGiven || (field === 'mask_selectors' && input.mask_selectors !== undefined);
      const missing = typeof opened === 'string' ? sealedNames(monitor).filter((field) => !given(field) && !dropped.includes(field)) : [];
      if (missing.length) throw new MonitorSecretsLostError({ _id: monitor._id, secret_fields: missing }, opened === 'unreadable', 'give them again with this change');
      const { sealed: replaced, ...kept } = this.split(this.checkCapture({ ...current, ...captureGiven }), input.mask_selectors ?? maskSelectors);
      Object.assign(change, kept);
      sealed = replaced;
    }
    if (input.name !== undefined) change.name = input.name;
    if (input.threshold !== undefined) change.threshold = input.threshold;
    if (input.callback_url !== undefined) change.callback_url = input.callback_url === null ? null : httpUrl('callback_url', input.callback_url);
    if (input.baseline !== undefined) change.baseline = input.baseline;
    if (input.notify !== undefined) change.notify = this.notifyOf(given.notify as Partial<MonitorNotifyInput>, monitor);
    if (input.mask_rects !== undefined) change.mask_rects = input.mask_rects;
    if (input.propose_masks !== undefined) change.propose_masks = input.propose_masks;
    if (input.pause_after_inconclusive !== undefined) change.pause_after_inconclusive = input.pause_after_inconclusive;
    const schedule: MonitorSchedule = input.schedule ?? monitor.schedule;
    if (input.schedule !== undefined) checkSchedule(input.schedule, this.deps.minMinutes(), now);
    const paused = input.paused ?? monitor.paused;
    change.paused = paused;
    if (paused) change.next_run_at = null;
    else if (input.schedule !== undefined || monitor.paused) change.next_run_at = nextOccurrence(schedule, now);
    // A resume starts a new count of inconclusive checks.
    if (!paused && monitor.paused) Object.assign(change, { paused_reason: null, inconclusive_streak: 0 });
    if (input.schedule !== undefined) change.schedule = input.schedule;
    const updated = await this.deps.store.update(monitor._id, change, sealed);
    if (!updated) throw new NotFoundError('monitor', id);
    return updated;
  }

  /** Removes the monitor, its checks and their diff pictures (the checks' jobs stay, as every job does, until retention). */
  async remove(accountId: string, id: string, removeDiff: (check: CheckRecord) => Promise<void>): Promise<void> {
    const monitor = await this.get(accountId, id);
    const checks = await this.deps.store.remove(monitor._id);
    for (const check of checks) if (check.diff_file) await removeDiff(check).catch(() => undefined);
  }

  /**
   * Runs a check now, whatever the schedule (paused too): jobs of `keyId` (the caller's key; the
   * monitor's own by default). The jobs made, or the refusal (a limit, a full queue) thrown.
   */
  async run(accountId: string, id: string, keyId?: string): Promise<JobRecord[]> {
    const monitor = await this.get(accountId, id);
    return this.deps.checks.start(monitor, null, keyId);
  }

  /** A page of the monitor's checks, newest first; `before` is a check's id (its job_id). */
  async checks(accountId: string, id: string, page: { limit: number; before?: string }): Promise<CheckRecord[]> {
    const monitor = await this.get(accountId, id);
    let before: { at: number; id: string } | undefined;
    if (page.before !== undefined) {
      const cursor = await this.deps.store.getCheck(page.before);
      if (!cursor || cursor.monitor_id !== monitor._id) throw new ValidationError(`before must be a check of this monitor; ${page.before} is not one`, 'before');
      before = { at: cursor.at, id: cursor._id };
    }
    return this.deps.store.checks(monitor._id, { before, limit: page.limit });
  }

  /** The newest check of a monitor, or null. */
  async lastCheck(monitorId: string): Promise<CheckRecord | null> {
    const [check] = await this.deps.store.checks(monitorId, { limit: 1 });
    return check ?? null;
  }

  /** Pins a completed check as the baseline every later check is compared with (and sets `baseline: pinned`). */
  async pin(accountId: string, id: string, jobId: string): Promise<MonitorRecord> {
    const monitor = await this.get(accountId, id);
    const check = typeof jobId === 'string' && jobId.length <= 64 ? await this.deps.store.getCheck(jobId) : null;
    if (!check || check.monitor_id !== monitor._id) throw new NotFoundError('check', jobId);
    if (check.status !== 'completed') throw new ValidationError(`only a completed check can be pinned; this one is ${check.status}`, 'job_id');
    if (check.verdict === 'inconclusive') throw new ValidationError('an inconclusive check cannot be pinned: its picture could not be trusted', 'job_id');
    const updated = await this.deps.store.update(monitor._id, { baseline: 'pinned', pinned_job_id: check._id, updated_at: this.deps.clock.now() });
    if (!updated) throw new NotFoundError('monitor', id);
    return updated;
  }

  /** Makes the proposed masks rectangle masks (`accept`), or drops them; either way none are proposed after. */
  async decideProposedMasks(accountId: string, id: string, accept: boolean): Promise<MonitorRecord> {
    const monitor = await this.get(accountId, id);
    const proposed = monitor.proposed_masks ?? [];
    const change: Partial<MonitorRecord> = { proposed_masks: [], updated_at: this.deps.clock.now() };
    if (accept) change.mask_rects = [...(monitor.mask_rects ?? []), ...proposed].slice(0, MAX_MASK_RECTS);
    const updated = await this.deps.store.update(monitor._id, change);
    if (!updated) throw new NotFoundError('monitor', id);
    return updated;
  }

  /**
   * The monitor's capture as jobs take it, its mask selectors with it: its request with its
   * sealed values opened; MonitorSecretsLostError naming them when they are not kept.
   */
  async paramsOf(monitor: MonitorRecord): Promise<CreateParams> {
    const opened = await this.openSealed(monitor);
    if (typeof opened === 'string') throw new MonitorSecretsLostError({ _id: monitor._id, secret_fields: sealedNames(monitor) }, opened === 'unreadable');
    const { capture, maskSelectors } = unsplit(monitor, opened);
    const params = this.deps.parseCapture(capture);
    if (maskSelectors.length) params.options = { ...params.options, maskSelectors };
    // The page's text from the same render, which each check's text change is read from.
    const extract = params.options.extract ?? [];
    if (!extract.includes('text')) params.options = { ...params.options, extract: [...extract, 'text'] };
    return params;
  }

  /**
   * The monitor as its views show it: the options sealed apart for their size read back (left
   * out while they are not kept), never a secret field.
   */
  async shown(monitor: MonitorRecord): Promise<MonitorRecord> {
    const names = monitor.sealed_options ?? [];
    if (names.length === 0) return monitor;
    const opened = await this.openSealed(monitor);
    if (typeof opened === 'string') return monitor;
    const { capture, maskSelectors } = unsplit(monitor, Object.fromEntries(names.filter((name) => name in opened).map((name) => [name, opened[name]])));
    return { ...monitor, request: capture, mask_selectors: maskSelectors };
  }

  /**
   * The monitor's Slack and Teams URLs in clear, to send to: opened from their seal (of a monitor
   * of an earlier version, its record's own). MonitorSecretsLostError naming them when the data
   * directory's key changed since they were sealed.
   */
  chatUrlsOf(monitor: Pick<MonitorRecord, '_id' | 'notify'>, remedy?: string): ChatUrls {
    const notify = monitor.notify;
    if (!notify) return { slack_url: null, teams_url: null };
    if (notify.sealed_urls === undefined) return { slack_url: notify.slack_url, teams_url: notify.teams_url };
    try {
      return this.deps.secrets.open<ChatUrls>(notify.sealed_urls);
    } catch {
      const fields = CHAT_URL_FIELDS.filter((field) => notify[field] !== null).map((field) => `notify.${field}`);
      throw new MonitorSecretsLostError({ _id: monitor._id, secret_fields: fields }, true, remedy);
    }
  }

  /**
   * Seals the Slack and Teams URLs that monitors of the accounts given keep in clear (written by
   * an earlier version), as a change of their notify would; how many monitors it sealed. Run at
   * start, before any check: sealing twice (two nodes at once) only seals the same URLs again.
   */
  async sealClearChatUrls(accountIds: readonly string[]): Promise<number> {
    let sealed = 0;
    for (const accountId of accountIds) {
      for (const monitor of await this.deps.store.list(accountId)) {
        const notify = monitor.notify;
        if (!notify || notify.sealed_urls !== undefined || (!notify.slack_url && !notify.teams_url)) continue;
        if (await this.deps.store.update(monitor._id, { notify: this.notifyOf({}, monitor) })) sealed++;
      }
    }
    return sealed;
  }

  /**
   * A monitor's notify from the fields given, the Slack and Teams URLs sealed and shown by their
   * origin. A field left out keeps the `current` monitor's, and so does a URL given back as it is
   * shown (a form that sends the monitor back as it read it); null removes a URL.
   */
  private notifyOf(given: Partial<MonitorNotifyInput>, current?: MonitorRecord): MonitorNotify {
    const before = current?.notify;
    const urls: ChatUrls = { slack_url: null, teams_url: null };
    let currentUrls: ChatUrls | undefined;
    for (const field of CHAT_URL_FIELDS) {
      const value = given[field];
      const keep = value === undefined || (value !== null && before !== undefined && value === shownChatUrl(before[field]));
      if (!keep) urls[field] = value ? httpUrl(`notify.${field}`, value) : null;
      else if (current && before?.[field]) urls[field] = (currentUrls ??= this.chatUrlsOf(current, 'give them again with this change'))[field];
    }
    const notify: MonitorNotify = { email: given.email ?? before?.email ?? [], slack_url: shownChatUrl(urls.slack_url), teams_url: shownChatUrl(urls.teams_url) };
    if (urls.slack_url || urls.teams_url) notify.sealed_urls = this.deps.secrets.seal(urls);
    return notify;
  }

  /** A capture request checked as POST /v1/screenshot checks it, and one a picture can be compared from. */
  private checkCapture(capture: Record<string, unknown>): Record<string, unknown> {
    this.deps.parseCapture(structuredClone(capture));
    if (capture.format === 'pdf') throw new ValidationError('format pdf cannot be compared; a monitor takes png, jpeg or webp', 'format');
    return capture;
  }

  /**
   * The capture's fields and the mask selectors in the record, but for its secret fields and the
   * options past RECORD_OPTIONS_BYTES together, sealed in one value kept apart (null: none are).
   * NeDB appends the whole record at every change of it, each scheduled run's claim included: a
   * one-minute monitor with 64 KB of styles and of scripts appended them every minute.
   */
  private split(capture: Record<string, unknown>, maskSelectors: string[]): SplitMonitor {
    const request: Record<string, unknown> = {};
    const secret: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(capture)) {
      if ((SECRET_FIELDS as readonly string[]).includes(field)) secret[field] = value;
      else request[field] = value;
    }
    const { kept, apart } = keepWhileFits<Record<string, unknown>>({ ...request, mask_selectors: maskSelectors }, RUN_ONLY_FIELDS);
    const { mask_selectors = [], ...keptRequest } = kept;
    const sealed = { ...secret, ...apart };
    return {
      request: keptRequest,
      mask_selectors: mask_selectors as string[],
      secret_fields: Object.keys(secret),
      sealed_options: Object.keys(apart),
      sealed: Object.keys(sealed).length ? this.deps.secrets.seal(sealed) : null,
    };
  }

  /** The monitor's sealed values (secret fields, options too large for its record) opened, or why they cannot be: not kept, or sealed under another key. */
  private async openSealed(monitor: MonitorRecord): Promise<Record<string, unknown> | 'lost' | 'unreadable'> {
    if (sealedNames(monitor).length === 0) return {};
    const sealed = await this.deps.store.secrets(monitor._id);
    if (sealed === null) return 'lost';
    try {
      return this.deps.secrets.open<Record<string, unknown>>(sealed);
    } catch {
      return 'unreadable';
    }
  }
}

/** A monitor's capture and mask selectors whole again: its record's, with `opened` (its sealed values, or some of them) put back. */
function unsplit(monitor: MonitorRecord, opened: Record<string, unknown>): { capture: Record<string, unknown>; maskSelectors: string[] } {
  const { mask_selectors: sealedMasks, ...sealed } = opened;
  return { capture: { ...monitor.request, ...sealed }, maskSelectors: (sealedMasks as string[] | undefined) ?? monitor.mask_selectors };
}

/**
 * A Slack or Teams URL as a monitor shows it: its origin and `/…`. The token of an incoming
 * webhook is in its path, so whoever reads the URL can post to the channel; the origin still says
 * which service it is. Idempotent: a URL shown is shown the same.
 */
export function shownChatUrl(url: string | null): string | null {
  return url === null ? null : `${new URL(url).origin}/…`;
}

/** The capture fields of a monitor request, as sent. */
function captureOf(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([field]) => MONITOR_CAPTURE_FIELDS.includes(field)));
}
