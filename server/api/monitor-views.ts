import type { Monitor, MonitorCheck } from '../contract/monitors.js';
import { screenshotUrl, statusUrl } from '../jobs/job-resource.js';
import { DEFAULT_PAUSE_AFTER_INCONCLUSIVE, diffUrl } from '../monitors/monitor-checks.js';
import { shownChatUrl } from '../monitors/monitor-service.js';
import type { CheckRecord, CheckVerdict, MonitorRecord } from '../store/records/monitor-record.js';
import { formatIsoSeconds } from '../time.js';

/** A monitor as GET /v1/monitors/{id} shows it: its capture without the secret fields' values. */
export function monitorView(monitor: MonitorRecord, last: CheckRecord | null): Monitor {
  return {
    id: monitor._id,
    account_id: monitor.account_id,
    name: monitor.name,
    url: typeof monitor.request.url === 'string' ? monitor.request.url : 'about:html',
    capture: monitor.request,
    secret_fields: monitor.secret_fields,
    schedule: monitor.schedule,
    threshold: monitor.threshold,
    mask_selectors: monitor.mask_selectors,
    mask_rects: monitor.mask_rects ?? [],
    propose_masks: monitor.propose_masks ?? false,
    proposed_masks: monitor.proposed_masks ?? [],
    callback_url: monitor.callback_url,
    notify: notifyView(monitor),
    paused: monitor.paused,
    baseline: monitor.baseline,
    pinned_job_id: monitor.pinned_job_id,
    pause_after_inconclusive: monitor.pause_after_inconclusive ?? DEFAULT_PAUSE_AFTER_INCONCLUSIVE,
    paused_reason: monitor.paused_reason ?? null,
    next_run_at: monitor.next_run_at === null ? null : formatIsoSeconds(monitor.next_run_at),
    last_check: last && { job_id: last.job_id, at: formatIsoSeconds(last.at), status: last.status, changed: last.changed, verdict: verdictOf(last) },
    created_at: formatIsoSeconds(monitor.created_at),
  };
}

/** Whom a monitor tells, its Slack and Teams URLs by their origin alone (of a monitor of an earlier version too, whose record holds them in clear). */
function notifyView({ notify }: MonitorRecord): Monitor['notify'] {
  if (!notify) return { email: [], slack_url: null, teams_url: null };
  return { email: notify.email, slack_url: shownChatUrl(notify.slack_url), teams_url: shownChatUrl(notify.teams_url) };
}

/** A check as GET /v1/monitors/{id}/checks lists it; its URLs under `baseUrl`; a run of occurrences without a job says how many and since when. */
export function checkView(check: CheckRecord, baseUrl: string): MonitorCheck {
  return {
    job_id: check.job_id,
    at: formatIsoSeconds(check.at),
    status: check.status,
    changed: check.changed,
    difference: check.difference,
    baseline_job_id: check.baseline_job_id,
    screenshot_url: check.image_file ? screenshotUrl(baseUrl, check.image_file) : null,
    diff_url: check.diff_file && check.image_file ? diffUrl(baseUrl, check.image_file) : null,
    status_url: check.job_id ? statusUrl(baseUrl, check.job_id) : null,
    mask_probe: check.mask_probe ?? false,
    picture_scale: check.picture_scale ?? null,
    verdict: verdictOf(check),
    inconclusive_codes: check.inconclusive_codes ?? [],
    text_change: check.text_change ?? null,
    pixels_only: check.pixels_only ?? false,
    regions: check.regions ?? [],
    error: check.error && (check.runs ?? 1) > 1 ? `${check.error} (the same for ${check.runs} scheduled checks in a row since ${formatIsoSeconds(check.first_at ?? check.at)})` : check.error,
  };
}

/** A completed check's verdict; of checks of earlier versions, read from `changed`. */
function verdictOf(check: CheckRecord): CheckVerdict | null {
  if (check.status !== 'completed') return null;
  return check.verdict ?? (check.changed === null ? 'first' : check.changed ? 'changed' : 'unchanged');
}
