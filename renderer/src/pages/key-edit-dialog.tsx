import type { Account, Key } from '../admin-types.js';
import { api } from '../api-client.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { KeyFormFields, useKeyForm } from './key-form.js';

export function KeyEditDialog({ account, apiKey, onClose, onSaved }: { account: Account; apiKey: Key; onClose: () => void; onSaved: (k: Key) => void }) {
  const form = useKeyForm(apiKey, 'The key needs a name.', async (body) =>
    onSaved(await api<Key>(`/admin/api/keys/${apiKey.id}`, { method: 'PATCH', body })),
  );

  return (
    <Modal title={`Edit key ${apiKey.prefix}…`} onClose={onClose} busy={form.busy}>
      <form onSubmit={form.submit} noValidate>
        <KeyFormFields
          form={form}
          accountDefault={account.default_network_scope}
          whitelistHint="IPv4 or IPv6, single addresses or CIDR ranges. Requests from other addresses get 403 “IP not allowed”."
        />
        <FormFooter error={form.errors.form} busy={form.busy} onCancel={onClose} submitLabel="Save" busyLabel="Saving…" />
      </form>
    </Modal>
  );
}
