import { useState } from 'preact/hooks';

import type { Account, Monitor } from '../admin-types.js';
import { api } from '../api-client.js';
import { CheckboxField, SelectField, TextField } from '../components/fields.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { routeApiError } from '../field-errors.js';

const FIELDS = ['account_id', 'url', 'name', 'schedule', 'threshold', 'mask_selectors', 'paused'] as const;
type FieldName = (typeof FIELDS)[number];
type ScheduleKind = 'every' | 'cron';

/** Creates a monitor for an account, or changes one: the page, the schedule, the threshold, the masks, paused. */
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
  const [paused, setPaused] = useState(monitor?.paused ?? false);
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: typeof errors = {};
    if (!/^https?:\/\//i.test(url.trim()) && !(monitor && monitor.url === 'about:html' && url.trim() === '')) found.url = 'Enter an address starting with http:// or https://.';
    if (kind === 'every' && !/^\d+$/.test(minutes.trim())) found.schedule = 'Enter a whole number of minutes.';
    if (!/^(0|1|0?\.\d+)$/.test(threshold.trim())) found.threshold = 'Enter a fraction between 0 and 1, such as 0.001.';
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const body = {
      ...(url.trim() ? { url: url.trim() } : {}),
      name: name.trim() || null,
      schedule: kind === 'every' ? { every_minutes: Number(minutes) } : { cron: cron.trim(), ...(timezone.trim() ? { timezone: timezone.trim() } : {}) },
      threshold: Number(threshold),
      mask_selectors: masks.split('\n').map((s) => s.trim()).filter(Boolean),
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
        <CheckboxField label="Paused" checked={paused} onChange={setPaused} error={errors.paused} />
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel={monitor ? 'Save' : 'Create monitor'} busyLabel="Saving…" />
      </form>
    </Modal>
  );
}
