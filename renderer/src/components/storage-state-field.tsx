import { useId } from 'preact/hooks';

/**
 * The logins' admin routes read bodies as large as v1's (MAX_BODY_KB in server/contract/v1.ts,
 * 11 MB; see server/api/admin-login-routes.ts): a file of 10 MB leaves room for the rest.
 */
const MAX_FILE_BYTES = 10 * 1024 * 1024;

/**
 * A Playwright storageState read from its JSON text: the object, or why it is not one. Only the
 * shape is checked here (an object with a `cookies` list); the server checks every field.
 */
export function parseStorageState(text: string): { value: object } | { error: string } {
  if (text.trim() === '') return { error: 'Paste the session’s JSON, or choose the file it was saved to.' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'This is not JSON. Paste what Playwright’s context.storageState() wrote, as it is.' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Array.isArray((value as { cookies?: unknown }).cookies)) {
    return { error: 'A storageState is an object with a “cookies” list (and, optionally, “origins” with their localStorage).' };
  }
  return { value };
}

/**
 * An imported session: its JSON pasted, or read from a chosen file into the same box. The text
 * stays in this dialog's state only; once saved, the server seals it and never shows it again.
 */
export function StorageStateField({ value, onInput, error, onError }: { value: string; onInput: (text: string) => void; error?: string; onError: (message: string) => void }) {
  const id = useId();
  const describedBy = `${id}-d`;
  const choose = async (file: File | undefined) => {
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      onError(`${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB; a session of at most 10 MB can be imported.`);
      return;
    }
    onInput(await file.text());
  };
  return (
    <div class="field">
      <label for={id}>Session (Playwright storageState JSON)</label>
      <textarea
        id={id}
        class="mono"
        rows={6}
        value={value}
        spellcheck={false}
        placeholder='{"cookies": [...], "origins": [...]}'
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <label for={`${id}-file`} class="sub-label">
        Or choose the file
      </label>
      <input id={`${id}-file`} type="file" accept="application/json,.json" onChange={(e) => void choose(e.currentTarget.files?.[0])} />
      {error ? (
        <p id={describedBy} class="field-error" role="alert">
          {error}
        </p>
      ) : (
        <p id={describedBy} class="field-hint">
          What <code>context.storageState()</code> wrote: cookies, and localStorage per origin. Sealed once saved, and never shown again.
        </p>
      )}
    </div>
  );
}
