import { useState } from 'preact/hooks';
import { api } from '../api-client.js';
import type { Key } from '../admin-types.js';
import { TextField } from '../components/fields.js';
import { ListEditor, useListEditor } from '../components/list-editor.js';
import { Modal } from '../components/modal.js';
import { routeApiError } from '../field-errors.js';
import { whitelistEntryError } from '../ip-whitelist.js';
import { FormFooter } from '../components/form-footer.js';

export function KeyEditDialog({ apiKey, onClose, onSaved }: { apiKey: Key; onClose: () => void; onSaved: (k: Key) => void }) {
  const [name, setName] = useState(apiKey.name);
  const whitelist = useListEditor(apiKey.ip_whitelist, whitelistEntryError);
  const [errors, setErrors] = useState<{ name?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const entries = whitelist.commit();
    if (!entries) return;
    if (name.trim() === '') {
      setErrors({ name: 'The key needs a name.' });
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      onSaved(await api<Key>(`/admin/api/keys/${apiKey.id}`, { method: 'PATCH', body: { name: name.trim(), ip_whitelist: entries } }));
    } catch (err) {
      const { field, message } = routeApiError(err, ['name', 'ip_whitelist'] as const);
      if (field === 'ip_whitelist') whitelist.setError(message);
      else setErrors({ [field ?? 'form']: message });
      setBusy(false);
    }
  };

  return (
    <Modal title={`Edit key ${apiKey.prefix}…`} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate>
        <TextField label="Name" value={name} onInput={setName} error={errors.name} />
        <ListEditor
          state={whitelist}
          label="IP whitelist"
          inputLabel="Add an IP address or CIDR range"
          placeholder="203.0.113.7 or 10.0.0.0/8"
          emptyText="Empty: the key works from any address."
          hint="IPv4 or IPv6, single addresses or CIDR ranges. Requests from other addresses get 403 “IP not allowed”."
        />
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel="Save" busyLabel="Saving…" />
      </form>
    </Modal>
  );
}
