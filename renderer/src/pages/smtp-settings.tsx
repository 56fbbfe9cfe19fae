import { useState } from 'preact/hooks';

import type { Settings } from '../admin-types.js';
import { CheckboxField, TextField } from '../components/fields.js';

type Smtp = NonNullable<Settings['smtp']>;

/** The settings' SMTP fields, as the admin API names them in its 400s ("smtp.port must be…"). */
export const SMTP_FIELDS = ['smtp', 'smtp.host', 'smtp.port', 'smtp.secure', 'smtp.username', 'smtp.password', 'smtp.from'] as const;
export type SmtpField = (typeof SMTP_FIELDS)[number];

export interface SmtpForm {
  /**
   * The `smtp` of PUT /admin/api/settings, or the errors of its fields: undefined when there was
   * none and none is typed, null when the host was emptied. The password goes only when typed
   * or removed; left empty, the saved one is kept.
   */
  check(): { smtp: (Omit<Smtp, 'has_password'> & { password?: string }) | null | undefined } | { errors: Partial<Record<SmtpField, string>> };
  fieldset(errors: Partial<Record<SmtpField, string>>): preact.JSX.Element;
}

/** The SMTP server monitors mail their changes through: host, port, TLS, user, a write-only password, From. */
export function useSmtpForm(initial: Settings['smtp']): SmtpForm {
  const [host, setHost] = useState(initial?.host ?? '');
  const [port, setPort] = useState(String(initial?.port ?? 587));
  const [secure, setSecure] = useState(initial?.secure ?? false);
  const [username, setUsername] = useState(initial?.username ?? '');
  const [password, setPassword] = useState('');
  const [removePassword, setRemovePassword] = useState(false);
  const [from, setFrom] = useState(initial?.from ?? '');
  const kept = initial?.has_password === true;

  const check: SmtpForm['check'] = () => {
    if (host.trim() === '') return { smtp: initial ? null : undefined };
    const errors: Partial<Record<SmtpField, string>> = {};
    if (!/^\d+$/.test(port.trim()) || Number(port) < 1 || Number(port) > 65_535) errors['smtp.port'] = 'Enter a port from 1 to 65535, such as 587 or 465.';
    if (!/^[^\s@]+@[^\s@]+$/.test(from.trim()) && !/<[^\s@]+@[^\s@]+>$/.test(from.trim())) errors['smtp.from'] = 'Enter the address monitor e-mails come from, such as monitors@example.com.';
    if (Object.keys(errors).length > 0) return { errors };
    return {
      smtp: {
        host: host.trim(),
        port: Number(port),
        secure,
        username: username.trim() || null,
        from: from.trim(),
        ...(password ? { password } : removePassword ? { password: '' } : {}),
      },
    };
  };

  const fieldset = (errors: Partial<Record<SmtpField, string>>) => (
    <fieldset class="card smtp-settings">
      <legend class="card-title">E-mail (SMTP)</legend>
      <p class="muted">The server monitors mail their changes through, to the addresses each monitor names. Empty host: no e-mail is sent.</p>
      <div class="field-grid">
        <TextField label="SMTP host" name="smtp.host" value={host} onInput={setHost} error={errors['smtp.host'] ?? errors.smtp} placeholder="smtp.example.com" />
        <TextField label="SMTP port" name="smtp.port" type="number" min={1} max={65_535} value={port} onInput={setPort} error={errors['smtp.port']} hint="587 with STARTTLS, 465 with TLS." />
        <TextField label="SMTP user name" name="smtp.username" value={username} onInput={setUsername} error={errors['smtp.username']} hint="Empty: no sign-in." />
        <TextField
          label="SMTP password"
          name="smtp.password"
          type="password"
          autoComplete="new-password"
          value={password}
          onInput={setPassword}
          error={errors['smtp.password']}
          placeholder={kept ? 'Set: leave empty to keep it' : ''}
          hint={kept ? 'A password is set; it is never shown. Type another to replace it.' : 'Kept sealed, never shown again.'}
        />
        <TextField label="From" name="smtp.from" value={from} onInput={setFrom} error={errors['smtp.from']} placeholder="monitors@example.com" />
      </div>
      <CheckboxField label="TLS from the start" checked={secure} onChange={setSecure} error={errors['smtp.secure']} hint="For port 465; otherwise STARTTLS is used when the server offers it." />
      {kept && <CheckboxField label="Remove the saved password" checked={removePassword} onChange={setRemovePassword} />}
    </fieldset>
  );

  return { check, fieldset };
}
