import { useState } from 'preact/hooks';
import { api } from '../api-client.js';
import type { Account, CreatedKey, Key } from '../admin-types.js';
import { CopyButton } from '../components/copy-button.js';
import { TextField } from '../components/fields.js';
import { ListEditor, useListEditor } from '../components/list-editor.js';
import { Modal } from '../components/modal.js';
import { routeApiError } from '../field-errors.js';
import { whitelistEntryError } from '../ip-whitelist.js';
import { FormFooter } from '../components/form-footer.js';

/**
 * Creates a key, then shows the secret once. The secret lives only in this dialog's state: it is
 * handed to nobody else and gone when the dialog closes.
 */
export function KeyCreateDialog({ account, onCreated, onClose }: { account: Account; onCreated: (k: Key) => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const whitelist = useListEditor([], whitelistEntryError);
  const [errors, setErrors] = useState<{ name?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    const entries = whitelist.commit();
    if (!entries) return;
    if (name.trim() === '') {
      setErrors({ name: 'Give the key a name that says who uses it, e.g. “billing-service”.' });
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      const k = await api<CreatedKey>(`/admin/api/accounts/${account.id}/keys`, { method: 'POST', body: { name: name.trim(), ip_whitelist: entries } });
      const { key: _secret, ...visible } = k;
      onCreated(visible);
      setCreated(k);
    } catch (err) {
      const { field, message } = routeApiError(err, ['name', 'ip_whitelist'] as const);
      if (field === 'ip_whitelist') whitelist.setError(message);
      else setErrors({ [field ?? 'form']: message });
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    return (
      // A new dialog rather than the form's, so focus moves to the key and Escape closes this one.
      <Modal key="created" title="Your new API key" onClose={onClose}>
        <p class="notice notice-warn">
          <strong>Copy this key now.</strong> It is shown only this once; the appliance keeps only a hash of it.
        </p>
        <div class="field">
          <label for="new-key">API key “{created.name}”</label>
          <div class="input-row">
            <input id="new-key" class="mono" type="text" readOnly autofocus value={created.key} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={created.key} class="button primary" />
          </div>
        </div>
        <p class="field-hint">
          Send it in the <code>X-API-Key</code> header of every request. Lost it? Revoke it and create another.
        </p>
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            I have copied it
          </button>
        </div>
      </Modal>
    );
  }

  return (
    <Modal key="form" title={`New key for ${account.email}`} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate>
        <TextField label="Name" value={name} onInput={setName} error={errors.name} autoFocus hint="Who or what uses the key." />
        <ListEditor
          state={whitelist}
          label="IP whitelist"
          inputLabel="Add an IP address or CIDR range"
          placeholder="203.0.113.7 or 10.0.0.0/8"
          emptyText="Empty: the key works from any address."
          hint="IPv4 or IPv6, single addresses or CIDR ranges."
        />
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel="Create key" busyLabel="Creating…" />
      </form>
    </Modal>
  );
}
