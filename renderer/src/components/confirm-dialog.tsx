import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

import { ApiRequestError } from '../api-client.js';
import { Modal } from './modal.js';

export interface ConfirmDialogProps {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** Runs the action; the dialog stays open with the error when it throws. */
  onConfirm: () => Promise<void>;
  onClose: () => void;
}

/** Asks before something that cannot be undone; the safe choice has the focus. */
export function ConfirmDialog({ title, children, confirmLabel, onConfirm, onClose }: ConfirmDialogProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (err) {
      setError(err instanceof ApiRequestError ? err.message : String(err));
      setBusy(false);
    }
  };
  return (
    <Modal title={title} onClose={onClose} busy={busy}>
      <div class="confirm-text">{children}</div>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" class="button" autofocus disabled={busy} onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="button danger" disabled={busy} onClick={confirm}>
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
