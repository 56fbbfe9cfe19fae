import { useState } from 'preact/hooks';

import type { Account, Monitor } from '../admin-types.js';
import { api } from '../api-client.js';
import { CheckboxField, SelectField, TextField } from '../components/fields.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { routeApiError } from '../field-errors.js';
import { draftOf, MaskRectsField, parseMaskRects } from './mask-rects-field.js';

const FIELDS = [
  'account_id',
  'url',
  'name',
  'schedule',
  'threshold',
  'mask_selectors',
  'mask_rects',
  'propose_masks',
  'pause_after_inconclusive',
  'notify',
  'notify.email',
  'notify.slack_url',
  'notify.teams_url',
  'paused',
] as const;
type FieldName = (typeof FIELDS)[number];
type ScheduleKind = 'every' | 'cron';
type HookField = 'slack_url' | 'teams_url';

const EMAIL = /^[^\s@]+@[^\s@]+$/;
/** A kept webhook address the view shows whole, which the form may send back; a masked one ("set", "https://…/…") it leaves out. */
const WHOLE_URL = /^https?:\/\/[^\s…*]+$/i;

/**
 * Creates a monitor for an account, or changes one: the page, the schedule, the threshold, the
 * masks (selectors, rectangles, proposed ones), pausing after inconclusive checks, paused, and
 * who is told of its events. A webhook address left empty is kept.
 */
export function MonitorFormDialog({ monitor, accounts, onClose, onSaved }: { monitor?: Monitor; accounts: Account[]; onClose: () => void; onSaved: (m: Monitor) => void }) {
  const schedule = monitor?.schedule;
  const [accountId, setAccountId] = useState(monitor?.account_id ?? accounts[0]?.id ?? '');
  const [url, setUrl] = useState(monitor && monitor.url !== 'about:html' ? monitor.url : '');
  const [name, setName] = useState(monitor?.name ?? '');
  const [kind, setKind] = useState<ScheduleKind>(schedule && 'cron' in schedule ? 'cron' : 'every');
  const [minutes, setMinutes] = useState(schedule && 'every_minutes' in schedule ? String(schedule.every_minutes) : '60');
  const [cron, setCron] = useState(schedule && 'cron' in schedule ? schedule.cron : '0 9 * * *');
  const [timezone, setTimezone] = useState(schedule && 'cron' in schedule ? (schedule.timezone ?? '') : '');
  const [threshold, setThreshold] = useState(String(monitor?.threshold ?? 0.001));
  const [masks, setMasks] = useState((monitor?.mask_selectors ?? []).join('\n'));
  const [rects, setRects] = useState(() => (monitor?.mask_rects ?? []).map(draftOf));
  // New monitors propose masks from their first picture unless told not to.
  const [proposeMasks, setProposeMasks] = useState(monitor?.propose_masks ?? true);
  const [pauseAfter, setPauseAfter] = useState(String(monitor?.pause_after_inconclusive ?? 5));
  const keptEmails = (monitor?.notify.email ?? []).join('\n');
  const [emails, setEmails] = useState(keptEmails);
  const [hooks, setHooks] = useState<Record<HookField, string>>({ slack_url: '', teams_url: '' });
  const [removeHook, setRemoveHook] = useState<Record<HookField, boolean>>({ slack_url: false, teams_url: false });
  const [paused, setPaused] = useState(monitor?.paused ?? false);
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);

  /**
   * The notify to send: nothing when none of it was touched; else the addresses, each webhook
   * typed, removed (null), or kept — sent back when the view shows it whole, left out otherwise.
   */
  const notifyChange = (emailList: string[]) => {
    const touched = emails !== keptEmails || Object.values(hooks).some((h) => h.trim()) || Object.values(removeHook).some(Boolean);
    if (!touched) return undefined;
    const hook = (field: HookField) => {
      const typed = hooks[field].trim();
      const kept = monitor?.notify[field];
      return typed || (removeHook[field] ? null : kept && WHOLE_URL.test(kept) ? kept : undefined);
    };
    return { email: emailList, slack_url: hook('slack_url'), teams_url: hook('teams_url') };
  };

  /** A webhook address: typed anew, or kept when left empty (with a way to remove it). */
  const hookField = (field: HookField, label: string) => {
    const kept = monitor?.notify[field];
    return (
      <>
        <TextField
          label={label}
          type="url"
          value={hooks[field]}
          onInput={(v) => setHooks((h) => ({ ...h, [field]: v }))}
          error={errors[`notify.${field}`]}
          placeholder={kept ? 'Kept: leave empty to keep it' : 'https://…'}
          hint={kept ? `One is set (${kept}); type another to replace it.` : 'Optional: an incoming webhook, told of changes with the text change first.'}
        />
        {kept && (
          <CheckboxField label={`Remove the ${label.split(' ')[0]} address`} checked={removeHook[field]} onChange={(v) => setRemoveHook((r) => ({ ...r, [field]: v }))} />
        )}
      </>
    );
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: typeof errors = {};
    if (!/^https?:\/\//i.test(url.trim()) && !(monitor && monitor.url === 'about:html' && url.trim() === '')) found.url = 'Enter an address starting with http:// or https://.';
    if (kind === 'every' && !/^\d+$/.test(minutes.trim())) found.schedule = 'Enter a whole number of minutes.';
    if (!/^(0|1|0?\.\d+)$/.test(threshold.trim())) found.threshold = 'Enter a fraction between 0 and 1, such as 0.001.';
    const maskRects = parseMaskRects(rects);
    if (!Array.isArray(maskRects)) found.mask_rects = maskRects.error;
    if (!/^\d+$/.test(pauseAfter.trim()) || Number(pauseAfter) < 1 || Number(pauseAfter) > 1000) found.pause_after_inconclusive = 'Enter a whole number from 1 to 1000.';
    const emailList = emails.split(/[\s,;]+/).filter(Boolean);
    const badEmail = emailList.find((a) => !EMAIL.test(a));
    if (badEmail) found['notify.email'] = `${badEmail} is not an e-mail address.`;
    for (const field of ['slack_url', 'teams_url'] as const) {
      if (hooks[field].trim() && !/^https:\/\//i.test(hooks[field].trim())) found[`notify.${field}`] = 'Enter an address starting with https://.';
    }
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const body = {
      ...(url.trim() ? { url: url.trim() } : {}),
      name: name.trim() || null,
      schedule: kind === 'every' ? { every_minutes: Number(minutes) } : { cron: cron.trim(), ...(timezone.trim() ? { timezone: timezone.trim() } : {}) },
      threshold: Number(threshold),
      mask_selectors: masks.split('\n').map((s) => s.trim()).filter(Boolean),
      mask_rects: maskRects,
      propose_masks: proposeMasks,
      pause_after_inconclusive: Number(pauseAfter),
      notify: notifyChange(emailList),
      paused,
    };
    setBusy(true);
    try {
      const saved = monitor
        ? await api<Monitor>(`/admin/api/monitors/${monitor.id}`, { method: 'PATCH', body })
        : await api<Monitor>('/admin/api/monitors', { method: 'POST', body: { account_id: accountId, ...body } });
      onSaved(saved);
    } catch (err) {
      const { field, message } = routeApiError(err, FIELDS);
      setErrors({ [field ?? 'form']: message });
      setBusy(false);
    }
  };

  return (
    <Modal title={monitor ? 'Edit monitor' : 'New monitor'} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate>
        {!monitor && (
          <SelectField label="Account" value={accountId} onChange={setAccountId} error={errors.account_id} options={accounts.map((a) => ({ value: a.id, label: a.email }))} />
        )}
        <TextField label="Page address" value={url} onInput={setUrl} error={errors.url} type="url" autoFocus />
        <TextField label="Name" value={name} onInput={setName} error={errors.name} hint="Optional: to tell monitors apart." />
        <SelectField<ScheduleKind>
          label="Schedule"
          value={kind}
          onChange={setKind}
          options={[
            { value: 'every', label: 'Every so many minutes' },
            { value: 'cron', label: 'A cron expression' },
          ]}
        />
        {kind === 'every' ? (
          <TextField label="Every" unit="minutes" value={minutes} onInput={setMinutes} error={errors.schedule} />
        ) : (
          <>
            <TextField label="Cron expression" value={cron} onInput={setCron} error={errors.schedule} hint="5 fields: minute hour day-of-month month day-of-week." />
            <TextField label="Time zone" value={timezone} onInput={setTimezone} hint="An IANA name such as Europe/Paris; UTC when empty." />
          </>
        )}
        <TextField label="Threshold" value={threshold} onInput={setThreshold} error={errors.threshold} hint="Fraction of pixels that must differ to count as a change." />
        <label class="field">
          <span class="field-label">Masked elements</span>
          <textarea rows={3} value={masks} onInput={(e) => setMasks(e.currentTarget.value)} aria-describedby="mask-hint" />
          <p id="mask-hint" class="field-hint">
            {errors.mask_selectors ?? 'CSS selectors, one a line: painted over before each picture (clocks, ads).'}
          </p>
        </label>
        <MaskRectsField drafts={rects} onChange={setRects} error={errors.mask_rects} />
        <CheckboxField
          label="Propose masks from the first picture"
          checked={proposeMasks}
          onChange={setProposeMasks}
          error={errors.propose_masks}
          hint="The first picture is taken twice, seconds apart; where the two differ (clocks, carousels) masks are proposed here to accept or reject."
        />
        <TextField
          label="Pause after"
          unit="inconclusive checks"
          value={pauseAfter}
          onInput={setPauseAfter}
          error={errors.pause_after_inconclusive}
          hint="In a row: checks whose picture cannot be trusted (blank, cut, still loading). The monitor then pauses and says why."
        />
        <fieldset class="field notify-fields">
          <legend>Notifications</legend>
          <label class="field">
            <span class="field-label">E-mail addresses</span>
            <textarea rows={2} value={emails} onInput={(e) => setEmails(e.currentTarget.value)} aria-describedby="notify-email-hint" aria-invalid={errors['notify.email'] ? 'true' : undefined} />
            <p id="notify-email-hint" class={errors['notify.email'] ? 'field-error' : 'field-hint'} role={errors['notify.email'] ? 'alert' : undefined}>
              {errors['notify.email'] ?? 'One a line, mailed through the SMTP server of the settings, with the text change and the diff picture.'}
            </p>
          </label>
          {hookField('slack_url', 'Slack webhook URL')}
          {hookField('teams_url', 'Teams webhook URL')}
          {errors.notify && (
            <p class="field-error" role="alert">
              {errors.notify}
            </p>
          )}
        </fieldset>
        <CheckboxField label="Paused" checked={paused} onChange={setPaused} error={errors.paused} />
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel={monitor ? 'Save' : 'Create monitor'} busyLabel="Saving…" />
      </form>
    </Modal>
  );
}
