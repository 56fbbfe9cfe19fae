/** The end of every form dialog: the form's own error, then Cancel and the submit button. */
export function FormFooter({
  error,
  busy,
  onCancel,
  submitLabel,
  busyLabel,
}: {
  error?: string;
  busy: boolean;
  onCancel: () => void;
  submitLabel: string;
  busyLabel: string;
}) {
  return (
    <>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" class="button primary" disabled={busy}>
          {busy ? busyLabel : submitLabel}
        </button>
      </div>
    </>
  );
}
