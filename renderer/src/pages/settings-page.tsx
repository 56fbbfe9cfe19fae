import { useState } from 'preact/hooks';

import type { Settings } from '../admin-types.js';
import { api } from '../api-client.js';
import { CheckboxField, TextField } from '../components/fields.js';
import { ListEditor, useListEditor } from '../components/list-editor.js';
import { LoadError } from '../components/load-error.js';
import { useToast } from '../components/toasts.js';
import { routeApiError } from '../field-errors.js';
import { whitelistEntryError } from '../ip-whitelist.js';
import { useResource } from '../use-resource.js';
import { PageHeader } from './page-header.js';
import { SMTP_FIELDS, type SmtpField, useSmtpForm } from './smtp-settings.js';

const NUMBER_FIELDS = [
  'concurrency',
  'queue_limit',
  'account_queue_share',
  'navigation_timeout_ms',
  'capture_timeout_ms',
  'retention_days',
  'history_days',
  'full_page_max_height',
] as const;
type NumberField = (typeof NUMBER_FIELDS)[number];
const ALL_FIELDS = [...NUMBER_FIELDS, 'egress_allow', 'egress_deny_lan', 'public_base_url', ...SMTP_FIELDS] as const;
type FieldName = (typeof ALL_FIELDS)[number];

/**
 * Each number as the form shows it. The time-outs are typed in seconds and sent in the
 * milliseconds the admin API keeps; their range is the API's (server/contract/admin.ts), the
 * other bounds the server checks alone and explains in its 400.
 */
const NUMBER_INFO: Record<NumberField, { label: string; hint: string; min: number; max?: number; perUnit?: number }> = {
  concurrency: { label: 'Captures at once', hint: 'About the number of CPU cores; each capture keeps one core busy.', min: 1 },
  queue_limit: { label: 'Queue limit', hint: 'Jobs waiting or running before new requests get 503.', min: 1 },
  account_queue_share: {
    label: 'One account\'s share of the queue (%)',
    hint: 'An account past this share of the queue limit (never fewer than 5 jobs) gets 503 while others are still admitted.',
    min: 1,
    max: 100,
  },
  navigation_timeout_ms: {
    label: 'Page load time-out (s)',
    hint: 'A page that has not loaded by then fails its job. 1 to 300 seconds.',
    min: 1,
    max: 300,
    perUnit: 1000,
  },
  capture_timeout_ms: {
    label: 'Capture time-out (s)',
    hint: 'Time allowed to take and store the image after loading. 1 to 300 seconds.',
    min: 1,
    max: 300,
    perUnit: 1000,
  },
  retention_days: { label: 'Keep images for (days)', hint: 'Images and page HTML are deleted after this; the job history stays.', min: 1 },
  history_days: {
    label: 'Keep job history for (days)',
    hint: 'Older jobs leave the history, with any file left. Usage per day stays for the charts and the monthly count.',
    min: 1,
  },
  full_page_max_height: { label: 'Full-page height cap (px)', hint: 'Longer pages are cut at this height.', min: 1000 },
};

/** The form's text for a number the API holds: a time-out in ms becomes seconds ("1.5"). */
function shownNumber(field: NumberField, value: number): string {
  const perUnit = NUMBER_INFO[field].perUnit ?? 1;
  return String(value / perUnit);
}

/** The API's value for the form's text, or why it cannot be one. */
function parseNumber(field: NumberField, raw: string): number | { error: string } {
  const { min, max, perUnit } = NUMBER_INFO[field];
  const text = raw.trim();
  if (perUnit) {
    // Seconds to the millisecond: at most three decimals.
    const seconds = Number(text);
    if (!/^\d+(\.\d{1,3})?$/.test(text) || seconds < min || seconds > max!) {
      return { error: `Enter a number of seconds from ${min} to ${max} (e.g. 30 or 1.5).` };
    }
    return Math.round(seconds * perUnit);
  }
  if (!/^\d+$/.test(text) || Number(text) < min) return { error: `Enter a whole number of at least ${min}.` };
  return Number(text);
}

export function SettingsPage() {
  const settings = useResource((signal) => api<Settings>('/admin/api/settings', { signal }), []);
  return (
    <>
      <PageHeader title="Settings" intro="How the appliance captures, and for how long it keeps the results. Changes apply to new jobs." />
      {settings.error && !settings.data && <LoadError error={settings.error} onRetry={settings.reload} />}
      {!settings.data && !settings.error && <p class="loading">Loading…</p>}
      {settings.data && <SettingsForm key={JSON.stringify(settings.data)} initial={settings.data} onSaved={(s) => settings.setData(() => s)} />}
    </>
  );
}

function SettingsForm({ initial, onSaved }: { initial: Settings; onSaved: (s: Settings) => void }) {
  const notify = useToast();
  const [numbers, setNumbers] = useState(() => Object.fromEntries(NUMBER_FIELDS.map((f) => [f, shownNumber(f, initial[f])])) as Record<NumberField, string>);
  const egress = useListEditor(initial.egress_allow, whitelistEntryError);
  const [denyLan, setDenyLan] = useState(initial.egress_deny_lan);
  const [baseUrl, setBaseUrl] = useState(initial.public_base_url ?? '');
  const smtp = useSmtpForm(initial.smtp);
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: typeof errors = {};
    const parsed = {} as Record<NumberField, number>;
    for (const f of NUMBER_FIELDS) {
      const value = parseNumber(f, numbers[f]);
      if (typeof value === 'number') parsed[f] = value;
      else found[f] = value.error;
    }
    const url = baseUrl.trim();
    if (url !== '' && !/^https?:\/\/[^/\s]+/i.test(url)) found.public_base_url = 'Enter an address such as https://shots.example.com, or leave it empty.';
    const allow = egress.commit();
    const mail = smtp.check();
    if ('errors' in mail) Object.assign(found, mail.errors);
    setErrors(found);
    if (Object.keys(found).length > 0 || !allow || 'errors' in mail) return;
    setBusy(true);
    try {
      const saved = await api<Settings>('/admin/api/settings', {
        method: 'PUT',
        body: { ...parsed, egress_allow: allow, egress_deny_lan: denyLan, public_base_url: url === '' ? null : url, ...(mail.smtp === undefined ? {} : { smtp: mail.smtp }) },
      });
      notify('Settings saved.');
      onSaved(saved);
    } catch (err) {
      const { field, message } = routeApiError(err, ALL_FIELDS);
      if (field === 'egress_allow') egress.setError(message);
      else setErrors({ [field ?? 'form']: message });
      setBusy(false);
    }
  };

  /** The number fields `fields`, each with its bounds, unit, hint and error. */
  const numberFields = (fields: readonly NumberField[]) =>
    fields.map((f) => (
      <TextField
        key={f}
        label={NUMBER_INFO[f].label}
        type="number"
        min={NUMBER_INFO[f].min}
        max={NUMBER_INFO[f].max}
        step={NUMBER_INFO[f].perUnit ? 'any' : undefined}
        unit={NUMBER_INFO[f].perUnit ? 's' : undefined}
        name={f}
        value={numbers[f]}
        onInput={(v) => setNumbers((n) => ({ ...n, [f]: v }))}
        hint={NUMBER_INFO[f].hint}
        error={errors[f]}
      />
    ));

  return (
    <form class="settings" onSubmit={submit} noValidate>
      <fieldset class="card">
        <legend class="card-title">Capture</legend>
        <div class="field-grid">
          {numberFields(['concurrency', 'queue_limit', 'account_queue_share', 'navigation_timeout_ms', 'capture_timeout_ms', 'full_page_max_height'])}
        </div>
      </fieldset>
      <fieldset class="card">
        <legend class="card-title">Retention</legend>
        <div class="field-grid">
          {numberFields(['retention_days', 'history_days'])}
        </div>
      </fieldset>
      <fieldset class="card">
        <legend class="card-title">Network</legend>
        {initial.egress_allow_command_line.length > 0 && (
          <fieldset class="field list-editor">
            <legend>Ranges allowed at start</legend>
            <ul class="chips" aria-label="Ranges allowed at start">
              {initial.egress_allow_command_line.map((entry) => (
                <li key={entry} class="chip">
                  <code>{entry}</code>
                </li>
              ))}
            </ul>
            <p class="field-hint">Given with --egress-allow or SCREENSHOT_EGRESS_ALLOW when the service started; change them there. They are not saved.</p>
          </fieldset>
        )}
        <ListEditor
          state={egress}
          label="Ranges the browser may reach anyway"
          inputLabel="Add an address or CIDR range"
          placeholder="127.0.0.1/32"
          emptyText="None: loopback, link-local and cloud metadata addresses stay blocked."
          hint="For example 127.0.0.1/32 to capture pages served on this machine."
        />
        <CheckboxField
          label="Block the local network too"
          checked={denyLan}
          onChange={setDenyLan}
          error={errors.egress_deny_lan}
          hint="Denies 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and fc00::/7 unless allowed above."
        />
        <TextField
          label="Public base URL"
          type="url"
          name="public_base_url"
          value={baseUrl}
          onInput={setBaseUrl}
          placeholder="https://shots.example.com"
          error={errors.public_base_url}
          hint="Used in status_url and screenshot_url. Empty: taken from each request’s Host header."
        />
      </fieldset>
      {smtp.fieldset(errors as Partial<Record<SmtpField, string>>)}
      {errors.form && (
        <p class="form-error" role="alert">
          {errors.form}
        </p>
      )}
      <div class="form-actions">
        <button type="submit" class="button primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
      </div>
    </form>
  );
}
