import type { ComponentChildren } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';

export interface ListEditorState {
  entries: string[];
  draft: string;
  error: string | null;
  setDraft: (text: string) => void;
  /** Adds the draft when it is valid; otherwise shows why not. */
  add: () => boolean;
  remove: (entry: string) => void;
  /** For an error the server found (a 400 naming an entry). */
  setError: (error: string | null) => void;
  /**
   * The entries to save, with a valid draft the user typed but did not add yet; null (and the
   * error shown) when the draft is invalid, so nothing half-typed is silently dropped.
   */
  commit: () => string[] | null;
}

/** How long typing pauses before the draft is checked, so a half-typed address is not called wrong. */
const CHECK_AFTER_MS = 350;

/** A draft may hold several entries, separated by commas, spaces or new lines (a pasted list). */
function splitDraft(draft: string): string[] {
  return draft.split(/[\s,;]+/).filter((e) => e !== '');
}

/**
 * The state of a list of checked text entries (IP whitelist, egress ranges). The draft is checked
 * as it is typed: once typing pauses, or at once while an error is shown, so the error names the
 * wrong entry before anything is submitted and goes away as soon as it is fixed.
 */
export function useListEditor(initial: readonly string[], validate: (entry: string) => string | null): ListEditorState {
  const [entries, setEntries] = useState<string[]>([...initial]);
  const [draft, setDraftState] = useState('');
  const [error, setError] = useState<string | null>(null);

  const draftError = (text: string): string | null => {
    for (const entry of splitDraft(text)) {
      const problem = validate(entry);
      if (problem) return problem;
    }
    return null;
  };

  useEffect(() => {
    if (draft.trim() === '') return undefined;
    const timer = setTimeout(() => setError(draftError(draft)), CHECK_AFTER_MS);
    return () => clearTimeout(timer);
    // Only typing schedules a check; the validator is the same for the editor's whole life.
  }, [draft]);

  const check = (): { next: string[]; ok: boolean } => {
    const problem = draftError(draft);
    if (problem) {
      setError(problem);
      return { next: entries, ok: false };
    }
    const next = [...entries];
    for (const entry of splitDraft(draft)) if (!next.includes(entry)) next.push(entry);
    return { next, ok: true };
  };

  return {
    entries,
    draft,
    error,
    setDraft: (text) => {
      setDraftState(text);
      setError((shown) => (shown && text.trim() !== '' ? draftError(text) : null));
    },
    add: () => {
      if (draft.trim() === '') {
        setError(validate(''));
        return false;
      }
      const { next, ok } = check();
      if (!ok) return false;
      setEntries(next);
      setDraftState('');
      setError(null);
      return true;
    },
    remove: (entry) => {
      setEntries((list) => list.filter((e) => e !== entry));
      setError(null);
    },
    setError,
    commit: () => {
      const { next, ok } = check();
      if (!ok) return null;
      setEntries(next);
      setDraftState('');
      return next;
    },
  };
}

export interface ListEditorProps {
  state: ListEditorState;
  label: string;
  inputLabel: string;
  placeholder?: string;
  hint?: ComponentChildren;
  emptyText: string;
}

/**
 * Entries as removable chips plus an input that checks each new entry before it is added, with
 * the error right under the input. Enter adds the entry instead of submitting the form around it.
 */
export function ListEditor({ state, label, inputLabel, placeholder, hint, emptyText }: ListEditorProps) {
  const id = useId();
  const describedBy = `${id}-d`;
  return (
    <fieldset class="field list-editor">
      <legend>{label}</legend>
      {state.entries.length === 0 ? (
        <p class="list-editor-empty">{emptyText}</p>
      ) : (
        <ul class="chips" aria-label={label}>
          {state.entries.map((entry) => (
            <li key={entry} class="chip">
              <code>{entry}</code>
              <button type="button" class="chip-remove" aria-label={`Remove ${entry}`} onClick={() => state.remove(entry)}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <label for={id} class="sub-label">
        {inputLabel}
      </label>
      <div class="input-row">
        <input
          id={id}
          type="text"
          value={state.draft}
          placeholder={placeholder}
          autoComplete="off"
          spellcheck={false}
          aria-invalid={state.error ? 'true' : undefined}
          aria-describedby={state.error || hint ? describedBy : undefined}
          onInput={(e) => state.setDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              state.add();
            }
          }}
        />
        <button type="button" class="button" onClick={() => state.add()}>
          Add
        </button>
      </div>
      {state.error ? (
        <p id={describedBy} class="field-error" role="alert">
          {state.error}
        </p>
      ) : hint ? (
        <p id={describedBy} class="field-hint">
          {hint}
        </p>
      ) : null}
    </fieldset>
  );
}
