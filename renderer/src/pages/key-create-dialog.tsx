import { useState } from 'preact/hooks';

import type { Account, CreatedKey, Key } from '../admin-types.js';
import { api } from '../api-client.js';
import { CopyButton } from '../components/copy-button.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { KeyFormFields, useKeyForm } from './key-form.js';

/**
 * Creates a key, then shows the secret once. The secret lives only in this dialog's state: it is
 * handed to nobody else and gone when the dialog closes.
 */
export function KeyCreateDialog({ account, onCreated, onClose }: { account: Account; onCreated: (k: Key) => void; onClose: () => void }) {
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const form = useKeyForm({ name: '', ip_whitelist: [], network_scope: account.default_network_scope }, 'Give the key a name that says who uses it, e.g. “billing-service”.', async (body) => {
    const k = await api<CreatedKey>(`/admin/api/accounts/${account.id}/keys`, { method: 'POST', body });
    const { key: _secret, signing_secret: _signingSecret, ...visible } = k;
    onCreated(visible);
    setCreated(k);
  });

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
        <div class="field">
          <label for="new-signing-secret">Signing secret for render links</label>
          <div class="input-row">
            <input id="new-signing-secret" class="mono" type="text" readOnly value={created.signing_secret} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={created.signing_secret} label="Copy secret" class="button" />
          </div>
        </div>
        <p class="field-hint">
          Only for clients that sign their own <code>/v1/render</code> links (see the README); the panel makes links without it. Shown
          this once too.
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
    <Modal key="form" title={`New key for ${account.email}`} onClose={onClose} busy={form.busy}>
      <form onSubmit={form.submit} noValidate>
        <KeyFormFields
          form={form}
          autoFocus
          nameHint="Who or what uses the key."
          whitelistHint="IPv4 or IPv6, single addresses or CIDR ranges."
          accountDefault={account.default_network_scope}
        />
        <FormFooter error={form.errors.form} busy={form.busy} onCancel={onClose} submitLabel="Create key" busyLabel="Creating…" />
      </form>
    </Modal>
  );
}
