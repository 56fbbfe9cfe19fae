import { useState } from 'preact/hooks';

import type { Account } from '../admin-types.js';
import { api } from '../api-client.js';
import { CopyButton } from '../components/copy-button.js';
import { Modal } from '../components/modal.js';

/** Shows the account's webhook signing secret only on request, and rotates it after a second click. */
export function WebhookSecretDialog({ account, onClose }: { account: Account; onClose: () => void }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [rotated, setRotated] = useState(false);
  const path = `/admin/api/accounts/${account.id}/webhook-secret`;

  const run = async (method: 'GET' | 'POST') => {
    setBusy(true);
    setError(null);
    try {
      const { secret } = await api<{ secret: string }>(path, { method });
      setSecret(secret);
      if (method === 'POST') setRotated(true);
      setConfirmRotate(false);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={`Webhook secret of ${account.email}`} onClose={onClose} busy={busy}>
      <p>
        Webhook notifications for this account are signed with this secret (Standard Webhooks: <code>webhook-signature</code> is an
        HMAC-SHA256). Receivers use it to check that a notification came from this appliance.
      </p>
      <div class="field">
        <label for="webhook-secret">Secret</label>
        <div class="input-row">
          <input id="webhook-secret" type="text" readOnly value={secret ?? '••••••••••••••••••••••••'} aria-description={secret ? undefined : 'hidden'} class="mono" />
          {secret ? (
            <CopyButton text={secret} />
          ) : (
            <button type="button" class="button" disabled={busy} onClick={() => run('GET')}>
              Reveal
            </button>
          )}
        </div>
      </div>
      {rotated && (
        <p class="notice" role="status">
          New secret in use. The old one keeps signing for 24 hours, so receivers have time to switch.
        </p>
      )}
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {confirmRotate ? (
        <div class="confirm-inline" role="group" aria-label="Confirm rotation">
          <p>Rotate the secret? Receivers must switch to the new one within 24 hours.</p>
          <div class="dialog-actions">
            <button type="button" class="button" onClick={() => setConfirmRotate(false)} disabled={busy}>
              Cancel
            </button>
            <button type="button" class="button danger" onClick={() => run('POST')} disabled={busy}>
              Rotate now
            </button>
          </div>
        </div>
      ) : (
        <div class="dialog-actions">
          <button type="button" class="button" onClick={() => setConfirmRotate(true)} disabled={busy}>
            Rotate secret…
          </button>
          <button type="button" class="button primary" onClick={onClose}>
            Done
          </button>
        </div>
      )}
    </Modal>
  );
}
