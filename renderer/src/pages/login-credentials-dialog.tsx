import { useState } from 'preact/hooks';

import type { Login } from '../admin-types.js';
import { api } from '../api-client.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { parseStorageState, StorageStateField } from '../components/storage-state-field.js';
import { routeApiError } from '../field-errors.js';
import { CredentialFields } from './login-create-dialog.js';

const FIELDS = ['username', 'password', 'storage_state'] as const;
type FieldName = (typeof FIELDS)[number];

/**
 * Gives a login its credentials (or session) again, after the site refused them: the appliance
 * does not try refused credentials again until they change. The next capture signs in afresh.
 */
export function LoginCredentialsDialog({ login, onClose, onSaved }: { login: Login; onClose: () => void; onSaved: (login: Login) => void }) {
  const [values, setValues] = useState<Record<FieldName, string>>({ username: '', password: '', storage_state: '' });
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);
  const set = (field: FieldName) => (value: string) => setValues((v) => ({ ...v, [field]: value }));

  const submit = async (e: Event) => {
    e.preventDefault();
    let body: Record<string, unknown>;
    if (login.type === 'storage_state') {
      const parsed = parseStorageState(values.storage_state);
      if ('error' in parsed) return setErrors({ storage_state: parsed.error });
      body = { storage_state: parsed.value };
    } else {
      if (values.password === '') return setErrors({ password: 'Enter the password.' });
      body = { password: values.password, ...(values.username.trim() !== '' ? { username: values.username.trim() } : {}) };
    }
    setErrors({});
    setBusy(true);
    try {
      onSaved(await api<Login>(`/admin/api/logins/${login.id}`, { method: 'PATCH', body }));
    } catch (err) {
      const { field, message } = routeApiError(err, FIELDS);
      setErrors({ [field ?? 'form']: message });
      setBusy(false);
    }
  };

  return (
    <Modal title={`Give credentials again: ${login.name}`} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate>
        {login.last_error && (
          <p class="notice notice-warn">
            The last sign-in failed: {login.last_error}
          </p>
        )}
        {login.type === 'storage_state' ? (
          <StorageStateField value={values.storage_state} onInput={set('storage_state')} error={errors.storage_state} onError={(message) => setErrors({ storage_state: message })} />
        ) : (
          <CredentialFields values={values} set={set} errors={errors} usernameHint="Empty: the one given before." />
        )}
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel="Save credentials" busyLabel="Saving…" />
      </form>
    </Modal>
  );
}
