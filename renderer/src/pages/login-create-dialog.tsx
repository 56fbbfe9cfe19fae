import { useState } from 'preact/hooks';

import type { Account, Login, LoginType } from '../admin-types.js';
import { api } from '../api-client.js';
import { SelectField, TextField } from '../components/fields.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { parseStorageState, StorageStateField } from '../components/storage-state-field.js';
import { routeApiError } from '../field-errors.js';

const SELECTORS = ['username_selector', 'password_selector', 'submit_selector', 'success_selector', 'success_url'] as const;
const FIELDS = ['name', 'type', 'login_url', 'site', 'username', 'password', 'storage_state', ...SELECTORS] as const;
type FieldName = (typeof FIELDS)[number];
type Values = Record<Exclude<FieldName, 'type'>, string>;

export const LOGIN_TYPE_LABELS: Record<LoginType, string> = {
  form: 'Sign-in form',
  basic: 'HTTP Basic',
  storage_state: 'Imported session',
};

const TYPE_OPTIONS = (Object.entries(LOGIN_TYPE_LABELS) as [LoginType, string][]).map(([value, label]) => ({ value, label }));

/** The fields each type needs, as the server asks for them, and what to say when one is empty. */
const REQUIRED: Record<LoginType, [FieldName, string][]> = {
  form: [
    ['login_url', 'Enter the address of the sign-in page.'],
    ['username', 'Enter the user name.'],
    ['password', 'Enter the password.'],
  ],
  basic: [
    ['site', 'Enter the site, e.g. https://intranet.corp.example.'],
    ['username', 'Enter the user name.'],
    ['password', 'Enter the password.'],
  ],
  storage_state: [],
};

const EMPTY: Values = Object.fromEntries(FIELDS.filter((f) => f !== 'type').map((f) => [f, ''])) as Values;

/**
 * Saves a login for an account: a sign-in form, HTTP Basic credentials, or an imported session.
 * The password and the session live only in this dialog's state and go to the server once.
 */
export function LoginCreateDialog({ account, onClose, onCreated }: { account: Account; onClose: () => void; onCreated: (login: Login) => void }) {
  const [type, setType] = useState<LoginType>('form');
  const [values, setValues] = useState<Values>(EMPTY);
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);
  const set = (field: keyof Values) => (value: string) => setValues((v) => ({ ...v, [field]: value }));

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: typeof errors = {};
    if (values.name.trim() === '') found.name = 'Give the login a name, e.g. “Wiki”.';
    for (const [field, message] of REQUIRED[type]) if (values[field as keyof Values].trim() === '') found[field] = message;
    const body: Record<string, unknown> = { name: values.name.trim(), type };
    if (type === 'storage_state') {
      const parsed = parseStorageState(values.storage_state);
      if ('error' in parsed) found.storage_state = parsed.error;
      else body.storage_state = parsed.value;
    } else {
      const fields = type === 'form' ? (['login_url', 'username', ...SELECTORS] as const) : (['site', 'username'] as const);
      for (const field of fields) if (values[field].trim() !== '') body[field] = values[field].trim();
      // A password is sent as typed: spaces may be part of it.
      body.password = values.password;
    }
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      onCreated(await api<Login>(`/admin/api/accounts/${account.id}/logins`, { method: 'POST', body }));
    } catch (err) {
      const { field, message } = routeApiError(err, FIELDS);
      setErrors({ [field ?? 'form']: message });
      setBusy(false);
    }
  };

  return (
    <Modal title={`New login for ${account.email}`} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate>
        <TextField label="Name" value={values.name} onInput={set('name')} error={errors.name} autoFocus hint="Jobs, monitors and render links name the login by its id; the name tells logins apart." />
        <SelectField
          label="Type"
          value={type}
          onChange={(t) => {
            setType(t);
            setErrors({});
          }}
          options={TYPE_OPTIONS}
          error={errors.type}
        />
        {type === 'form' && (
          <>
            <TextField
              label="Sign-in page address"
              type="url"
              value={values.login_url}
              onInput={set('login_url')}
              error={errors.login_url}
              placeholder="https://wiki.corp.example/login"
              hint="The appliance opens it, fills in the fields and signs in once; the session it gets serves the next captures."
            />
            <CredentialFields values={values} set={set} errors={errors} />
            <details class="login-more">
              <summary>Fields and success check (optional)</summary>
              <TextField label="User name field" value={values.username_selector} onInput={set('username_selector')} error={errors.username_selector} placeholder="#user" hint="A CSS selector. Empty: the text or e-mail field before the password field." />
              <TextField label="Password field" value={values.password_selector} onInput={set('password_selector')} error={errors.password_selector} placeholder="#pass" hint="Empty: the visible password field." />
              <TextField label="Sign-in button" value={values.submit_selector} onInput={set('submit_selector')} error={errors.submit_selector} hint="Empty: the form’s submit button." />
              <TextField label="Signed-in element" value={values.success_selector} onInput={set('success_selector')} error={errors.success_selector} placeholder=".user-menu" hint="An element that exists only when signed in." />
              <TextField label="Signed-in address" type="url" value={values.success_url} onInput={set('success_url')} error={errors.success_url} hint="An address (or its beginning) the app lands on once signed in." />
            </details>
          </>
        )}
        {type === 'basic' && (
          <>
            <TextField
              label="Site"
              type="url"
              value={values.site}
              onInput={set('site')}
              error={errors.site}
              placeholder="https://intranet.corp.example"
              hint="Scheme, host and port, no path. The credentials go to this origin and to no other."
            />
            <CredentialFields values={values} set={set} errors={errors} />
          </>
        )}
        {type === 'storage_state' && (
          <StorageStateField value={values.storage_state} onInput={set('storage_state')} error={errors.storage_state} onError={(message) => setErrors({ storage_state: message })} />
        )}
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel="Save login" busyLabel="Saving…" />
      </form>
    </Modal>
  );
}

/** User name and password: the password is typed once and never shown again. */
export function CredentialFields({
  values,
  set,
  errors,
  usernameHint,
}: {
  values: { username: string; password: string };
  set: (field: 'username' | 'password') => (value: string) => void;
  errors: { username?: string; password?: string };
  usernameHint?: string;
}) {
  return (
    <div class="field-row">
      <TextField label="User name" value={values.username} onInput={set('username')} error={errors.username} autoComplete="off" hint={usernameHint} />
      <TextField
        label="Password"
        type="password"
        value={values.password}
        onInput={set('password')}
        error={errors.password}
        autoComplete="new-password"
        hint="Sealed once saved; never shown again."
      />
    </div>
  );
}
