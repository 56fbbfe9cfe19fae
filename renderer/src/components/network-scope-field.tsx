import { useId, useState } from 'preact/hooks';

import type { NetworkScope } from '../admin-types.js';
import { scopeEntryError, scopeLabel } from '../network-scope.js';
import { ListEditor, type ListEditorState, useListEditor } from './list-editor.js';

type Choice = 'public' | 'lan' | 'list';

export interface NetworkScopeState {
  choice: Choice;
  setChoice: (choice: Choice) => void;
  list: ListEditorState;
  /** An error about the scope as a whole (a list entry's error shows in the list editor). */
  error: string | null;
  /** For an error the server found (a 400 naming network_scope): shown where the admin is looking. */
  setError: (error: string | null) => void;
  /** The scope to save; null (and the error shown) when the list is chosen but invalid or empty. */
  commit: () => NetworkScope | null;
}

const choiceOf = (scope: NetworkScope): Choice => (typeof scope === 'string' ? scope : 'list');

/** The state of a network scope: public, LAN, or a checked list of CIDR ranges and host names. */
export function useNetworkScope(initial: NetworkScope): NetworkScopeState {
  const [choice, setChoiceState] = useState<Choice>(choiceOf(initial));
  const list = useListEditor(typeof initial === 'string' ? [] : initial, scopeEntryError);
  const [error, setError] = useState<string | null>(null);
  return {
    choice,
    setChoice: (next) => {
      setChoiceState(next);
      setError(null);
      list.setError(null);
    },
    list,
    error,
    setError: (message) => (choice === 'list' ? list.setError(message) : setError(message)),
    commit: () => {
      if (choice !== 'list') return choice;
      const entries = list.commit();
      if (!entries) return null;
      if (entries.length === 0) {
        list.setError('Add at least one CIDR range or host name, or choose another scope.');
        return null;
      }
      return entries;
    },
  };
}

const CHOICES: { value: Choice; label: string; hint: string }[] = [
  { value: 'public', label: 'Public internet only', hint: 'No private, loopback or link-local address, even one the egress settings allow.' },
  { value: 'lan', label: 'LAN', hint: 'Whatever the egress settings allow: the public internet and the local network.' },
  { value: 'list', label: 'Only these ranges and hosts', hint: 'The public internet, and of the local network only the ranges and host names listed.' },
];

/**
 * Where a key's captures, monitors, render links and webhooks may connect, as three choices; the
 * third opens a list editor. `accountDefault` marks the choice new keys of the account get.
 */
export function NetworkScopeField({ state, label, hint, accountDefault }: { state: NetworkScopeState; label: string; hint?: string; accountDefault?: NetworkScope }) {
  const id = useId();
  const defaultChoice = accountDefault === undefined ? null : choiceOf(accountDefault);
  return (
    <fieldset class="field scope-field" aria-describedby={state.error ? `${id}-e` : undefined}>
      <legend>{label}</legend>
      {hint && <p class="field-hint scope-hint">{hint}</p>}
      {CHOICES.map((c) => (
        <div key={c.value} class="scope-choice">
          <input
            id={`${id}-${c.value}`}
            type="radio"
            name={id}
            value={c.value}
            checked={state.choice === c.value}
            onChange={() => state.setChoice(c.value)}
            aria-describedby={`${id}-${c.value}-d`}
          />
          <label for={`${id}-${c.value}`}>
            {c.label}
            {defaultChoice === c.value && <span class="muted"> (the account’s default{c.value === 'list' ? `: ${scopeLabel(accountDefault!)}` : ''})</span>}
          </label>
          <p id={`${id}-${c.value}-d`} class="field-hint">
            {c.hint}
          </p>
        </div>
      ))}
      {state.error && (
        <p id={`${id}-e`} class="field-error" role="alert">
          {state.error}
        </p>
      )}
      {state.choice === 'list' && (
        <ListEditor
          state={state.list}
          label="Ranges and hosts"
          inputLabel="Add a CIDR range or a host name"
          placeholder="10.20.0.0/16 or wiki.corp.example"
          emptyText="None yet: add the private ranges and host names the key may reach."
          hint="A host name grants that name only, not its address; loopback and link-local still need the admin’s allow in Settings."
        />
      )}
    </fieldset>
  );
}
