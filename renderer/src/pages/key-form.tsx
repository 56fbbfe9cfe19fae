import { useState } from 'preact/hooks';

import type { NetworkScope } from '../admin-types.js';
import { TextField } from '../components/fields.js';
import { ListEditor, type ListEditorState,useListEditor } from '../components/list-editor.js';
import { NetworkScopeField, type NetworkScopeState, useNetworkScope } from '../components/network-scope-field.js';
import { routeApiError } from '../field-errors.js';
import { whitelistEntryError } from '../ip-whitelist.js';

/** What the create and edit dialogs send for a key. */
export interface KeyFormBody {
  name: string;
  ip_whitelist: string[];
  network_scope: NetworkScope;
}

export interface KeyForm {
  name: string;
  setName: (name: string) => void;
  whitelist: ListEditorState;
  scope: NetworkScopeState;
  errors: { name?: string; form?: string };
  busy: boolean;
  submit: (e: Event) => Promise<void>;
}

/**
 * The state of a key's name, IP whitelist and network scope, checked before `send` is called with them; the
 * server's 400s land on the field they name.
 */
export function useKeyForm(initial: KeyFormBody, nameMissing: string, send: (body: KeyFormBody) => Promise<void>): KeyForm {
  const [name, setName] = useState(initial.name);
  const whitelist = useListEditor(initial.ip_whitelist, whitelistEntryError);
  const scope = useNetworkScope(initial.network_scope);
  const [errors, setErrors] = useState<{ name?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const entries = whitelist.commit();
    const networkScope = scope.commit();
    if (!entries || !networkScope) return;
    if (name.trim() === '') {
      setErrors({ name: nameMissing });
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      await send({ name: name.trim(), ip_whitelist: entries, network_scope: networkScope });
    } catch (err) {
      const { field, message } = routeApiError(err, ['name', 'ip_whitelist', 'network_scope'] as const);
      if (field === 'ip_whitelist') whitelist.setError(message);
      else if (field === 'network_scope') scope.setError(message);
      else setErrors({ [field ?? 'form']: message });
    } finally {
      setBusy(false);
    }
  };

  return { name, setName, whitelist, scope, errors, busy, submit };
}

/** The name, IP whitelist and network scope fields of a key form; `accountDefault` is marked among the scopes. */
export function KeyFormFields({
  form,
  nameHint,
  whitelistHint,
  autoFocus,
  accountDefault,
}: {
  form: KeyForm;
  nameHint?: string;
  whitelistHint: string;
  autoFocus?: boolean;
  accountDefault: NetworkScope;
}) {
  return (
    <>
      <TextField label="Name" value={form.name} onInput={form.setName} error={form.errors.name} autoFocus={autoFocus} hint={nameHint} />
      <ListEditor
        state={form.whitelist}
        label="IP whitelist"
        inputLabel="Add an IP address or CIDR range"
        placeholder="203.0.113.7 or 10.0.0.0/8"
        emptyText="Empty: the key works from any address."
        hint={whitelistHint}
      />
      <NetworkScopeField state={form.scope} label="Network scope" accountDefault={accountDefault} />
    </>
  );
}
