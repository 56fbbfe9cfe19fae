import { useState } from 'preact/hooks';

import type { Account, Login } from '../admin-types.js';
import { api } from '../api-client.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { EmptyState } from '../components/empty-state.js';
import { LoadError } from '../components/load-error.js';
import { useToast } from '../components/toasts.js';
import { formatAbsolute, formatRelative } from '../format-time.js';
import { useResource } from '../use-resource.js';
import { LOGIN_TYPE_LABELS, LoginCreateDialog } from './login-create-dialog.js';
import { LoginCredentialsDialog } from './login-credentials-dialog.js';

type Open = { kind: 'create' } | { kind: 'credentials'; login: Login } | { kind: 'delete'; login: Login } | null;

const STATES: Record<Login['state'], { label: string; badge: string }> = {
  new: { label: 'Not signed in yet', badge: 'badge' },
  signed_in: { label: 'Signed in', badge: 'badge badge-completed' },
  failed: { label: 'Sign-in failed', badge: 'badge badge-failed' },
};

/**
 * An account's saved logins: what each is and how its last sign-in went, never a credential or a
 * session (the admin API has none to give). New ones are made here; refused credentials are
 * given again; a deleted login's session is erased.
 */
export function AccountLogins({ account }: { account: Account }) {
  const notify = useToast();
  const logins = useResource((signal) => api<{ logins: Login[] }>(`/admin/api/accounts/${account.id}/logins`, { signal }).then((r) => r.logins), [account.id]);
  const [open, setOpen] = useState<Open>(null);
  const close = () => setOpen(null);
  const list = logins.data;

  return (
    <div class="card">
      <div class="card-head">
        <h2 class="card-title">Saved logins of {account.email}</h2>
        <button type="button" class="button primary" onClick={() => setOpen({ kind: 'create' })}>
          New login
        </button>
      </div>
      {logins.error && !list && <LoadError error={logins.error} onRetry={logins.reload} />}
      {!list && !logins.error && <p class="loading">Loading…</p>}
      {list && list.length === 0 && (
        <EmptyState title="No saved logins for this account yet">
          <p>
            A saved login lets captures of pages behind a sign-in page come out signed in: a job, monitor or render link names it with{' '}
            <code>"login": "login_…"</code>. Its password or session is sealed and never shown again.
          </p>
        </EmptyState>
      )}
      {list && list.length > 0 && (
        <div class="table-wrap">
          <table class="table table-cards">
            <caption class="visually-hidden">Saved logins of {account.email}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Site</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((l) => (
                <tr key={l.id}>
                  <th scope="row" class="cell-main">
                    {l.name}
                    <code class="login-id">{l.id}</code>
                  </th>
                  <td data-label="Type">{LOGIN_TYPE_LABELS[l.type]}</td>
                  <td data-label="Site" class="login-site">
                    <code>{l.site}</code>
                  </td>
                  <td data-label="State" class="login-state">
                    <span class={STATES[l.state].badge}>{STATES[l.state].label}</span>
                    {l.signed_in_at && (
                      <span class="login-when">
                        signed in{' '}
                        <time dateTime={l.signed_in_at} title={formatAbsolute(l.signed_in_at)}>
                          {formatRelative(l.signed_in_at)}
                        </time>
                      </span>
                    )}
                    {l.last_error && <span class="login-error">{l.last_error}</span>}
                  </td>
                  <td class="actions login-actions">
                    {l.state === 'failed' && (
                      <button type="button" class="button small" aria-label={`Give credentials again for ${l.name}`} onClick={() => setOpen({ kind: 'credentials', login: l })}>
                        Give credentials again
                      </button>
                    )}
                    <button type="button" class="button small danger-text" aria-label={`Delete login ${l.name}`} onClick={() => setOpen({ kind: 'delete', login: l })}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open?.kind === 'create' && (
        <LoginCreateDialog
          account={account}
          onClose={close}
          onCreated={(login) => {
            logins.setData((l) => [...(l ?? []), login]);
            notify(`Login ${login.name} saved. Its credentials are not shown again.`);
            close();
          }}
        />
      )}
      {open?.kind === 'credentials' && (
        <LoginCredentialsDialog
          login={open.login}
          onClose={close}
          onSaved={(login) => {
            logins.setData((l) => l?.map((x) => (x.id === login.id ? login : x)));
            notify(`Login ${login.name} saved; the next capture signs in with it.`);
            close();
          }}
        />
      )}
      {open?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete this login?"
          confirmLabel="Delete login"
          onClose={close}
          onConfirm={async () => {
            await api<void>(`/admin/api/logins/${open.login.id}`, { method: 'DELETE' });
            logins.setData((l) => l?.filter((x) => x.id !== open.login.id));
            notify(`Login ${open.login.name} deleted.`);
          }}
        >
          <p>
            <strong>{open.login.name}</strong> and the session it keeps are erased. Jobs, monitors and render links that name it fail until
            they name another.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
