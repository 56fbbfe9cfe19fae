import { useState } from 'preact/hooks';

import type { Account, Key } from '../admin-types.js';
import { api } from '../api-client.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { EmptyState } from '../components/empty-state.js';
import { SelectField } from '../components/fields.js';
import { LoadError } from '../components/load-error.js';
import { useToast } from '../components/toasts.js';
import { formatAbsolute, formatRelative } from '../format-time.js';
import { replaceParams, routeHref } from '../hash-route.js';
import { scopeLabel } from '../network-scope.js';
import { noApiAccessReason, PLANS } from '../plans.js';
import { useResource } from '../use-resource.js';
import { AccountLogins } from './account-logins.js';
import { KeyCreateDialog } from './key-create-dialog.js';
import { KeyEditDialog } from './key-edit-dialog.js';
import { PageHeader } from './page-header.js';
import { RenderLinkDialog } from './render-link-dialog.js';

type Open = { kind: 'create' } | { kind: 'edit'; key: Key } | { kind: 'render-link'; key: Key } | { kind: 'revoke'; key: Key } | { kind: 'delete'; key: Key } | null;

export function KeysPage({ params }: { params: URLSearchParams }) {
  const accounts = useResource((signal) => api<{ accounts: Account[] }>('/admin/api/accounts', { signal }).then((r) => r.accounts), []);
  const list = accounts.data;
  const wanted = params.get('account');
  const account = list?.find((a) => a.id === wanted) ?? list?.[0];

  return (
    <>
      <PageHeader
        title="API keys"
        intro="Keys authenticate API calls in the X-API-Key header. A key is shown once, when it is created. Below an account’s keys, its saved logins."
      />
      {accounts.error && !list && <LoadError error={accounts.error} onRetry={accounts.reload} />}
      {!list && !accounts.error && <p class="loading">Loading…</p>}
      {list && list.length === 0 && (
        <EmptyState title="No accounts yet">
          <p>
            Keys belong to an account. <a href={routeHref('accounts')}>Create an account</a> first, then come back here to give it a key.
          </p>
        </EmptyState>
      )}
      {list && account && (
        <>
          <div class="toolbar">
            <SelectField
              label="Account"
              value={account.id}
              onChange={(id) => replaceParams('keys', { account: id })}
              options={list.map((a) => ({ value: a.id, label: a.email }))}
            />
          </div>
          <AccountKeys key={account.id} account={account} />
          <AccountLogins key={`logins-${account.id}`} account={account} />
        </>
      )}
    </>
  );
}

function AccountKeys({ account }: { account: Account }) {
  const notify = useToast();
  const keys = useResource((signal) => api<{ keys: Key[] }>(`/admin/api/accounts/${account.id}/keys`, { signal }).then((r) => r.keys), [account.id]);
  const [open, setOpen] = useState<Open>(null);
  const close = () => setOpen(null);
  const replace = (k: Key) => keys.setData((l) => l?.map((x) => (x.id === k.id ? k : x)));
  const list = keys.data;

  return (
    <div class="card">
      <div class="card-head">
        <h2 class="card-title">Keys of {account.email}</h2>
        <button type="button" class="button primary" onClick={() => setOpen({ kind: 'create' })}>
          New key
        </button>
      </div>
      {(!account.email_verified || !PLANS[account.plan].apiAccess) && (
        <p class="notice">
          {!account.email_verified ? 'This account’s e-mail is not verified, so its keys get 403 “Email not verified”. ' : `${noApiAccessReason(account.plan)} `}
          <a href={routeHref('accounts')}>Change it on the Accounts page.</a>
        </p>
      )}
      {keys.error && !list && <LoadError error={keys.error} onRetry={keys.reload} />}
      {!list && !keys.error && <p class="loading">Loading…</p>}
      {list && list.length === 0 && (
        <EmptyState title="No keys for this account yet">
          <p>
            Create a key and hand it to the client, which sends it in the <code>X-API-Key</code> header. You can limit a key to
            some IP addresses or ranges.
          </p>
          <button type="button" class="button primary" onClick={() => setOpen({ kind: 'create' })}>
            Create a key
          </button>
        </EmptyState>
      )}
      {list && list.length > 0 && (
        <div class="table-wrap">
          <table class="table table-cards">
            <caption class="visually-hidden">API keys of {account.email}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">IP whitelist</th>
                <th scope="col">Network scope</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((k) => (
                <tr key={k.id} class={k.revoked ? 'row-muted' : undefined}>
                  <th scope="row" class="cell-main">
                    {k.name || <span class="muted">unnamed</span>}
                  </th>
                  <td data-label="Key">
                    <code class="key-prefix" title="Only the start of the key is kept visible">
                      {k.prefix}…
                    </code>
                  </td>
                  <td data-label="IP whitelist">
                    {k.ip_whitelist.length === 0 ? (
                      <span class="muted">Any address</span>
                    ) : (
                      <ul class="chips chips-compact">
                        {k.ip_whitelist.map((e) => (
                          <li key={e} class="chip">
                            <code>{e}</code>
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td data-label="Network scope">
                    <NetworkScopeCell scope={k.network_scope} />
                  </td>
                  <td data-label="Created">
                    <time dateTime={k.created_at} title={formatAbsolute(k.created_at)}>
                      {formatRelative(k.created_at)}
                    </time>
                  </td>
                  <td data-label="Last used">
                    {k.last_used_at ? (
                      <time dateTime={k.last_used_at} title={formatAbsolute(k.last_used_at)}>
                        {formatRelative(k.last_used_at)}
                      </time>
                    ) : (
                      <span class="muted">never</span>
                    )}
                  </td>
                  <td data-label="Status">{k.revoked ? <span class="badge badge-failed">Revoked</span> : <span class="badge badge-completed">Active</span>}</td>
                  <td class="actions">
                    {!k.revoked && (
                      <>
                        <button type="button" class="button small" aria-label={`Edit key ${k.name || k.prefix}`} onClick={() => setOpen({ kind: 'edit', key: k })}>
                          Edit
                        </button>
                        <button
                          type="button"
                          class="button small"
                          aria-label={`Render link with key ${k.name || k.prefix}`}
                          onClick={() => setOpen({ kind: 'render-link', key: k })}
                        >
                          Render link
                        </button>
                        <button type="button" class="button small danger-text" aria-label={`Revoke key ${k.name || k.prefix}`} onClick={() => setOpen({ kind: 'revoke', key: k })}>
                          Revoke
                        </button>
                      </>
                    )}
                    {k.revoked && (
                      <button type="button" class="button small danger-text" aria-label={`Delete key ${k.name || k.prefix}`} onClick={() => setOpen({ kind: 'delete', key: k })}>
                        Delete
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open?.kind === 'create' && (
        <KeyCreateDialog
          account={account}
          onCreated={(k) => keys.setData((l) => [...(l ?? []), k])}
          onClose={() => {
            close();
            void keys.reload();
          }}
        />
      )}
      {open?.kind === 'edit' && (
        <KeyEditDialog
          account={account}
          apiKey={open.key}
          onClose={close}
          onSaved={(k) => {
            replace(k);
            notify(`Key ${k.name || k.prefix} saved.`);
            close();
          }}
        />
      )}
      {open?.kind === 'render-link' && <RenderLinkDialog apiKey={open.key} onClose={close} onKeyChanged={replace} />}
      {open?.kind === 'revoke' && (
        <ConfirmDialog
          title="Revoke this key?"
          confirmLabel="Revoke key"
          onClose={close}
          onConfirm={async () => {
            replace(await api<Key>(`/admin/api/keys/${open.key.id}`, { method: 'PATCH', body: { revoked: true } }));
            notify(`Key ${open.key.name || open.key.prefix} revoked.`);
          }}
        >
          <p>
            Requests with <code>{open.key.prefix}…</code> ({open.key.name || 'unnamed'}) get 401 from now on. This cannot be undone; the
            client needs a new key.
          </p>
        </ConfirmDialog>
      )}
      {open?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete this revoked key?"
          confirmLabel="Delete key"
          onClose={close}
          onConfirm={async () => {
            await api<void>(`/admin/api/keys/${open.key.id}`, { method: 'DELETE' });
            keys.setData((l) => l?.filter((x) => x.id !== open.key.id));
            notify(`Key ${open.key.name || open.key.prefix} deleted.`);
          }}
        >
          <p>
            The key <code>{open.key.prefix}…</code> disappears from this list. It already does not work.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** A key's network scope in short: public or LAN in words, a list as its entries. */
function NetworkScopeCell({ scope }: { scope: Key['network_scope'] }) {
  if (typeof scope === 'string') return <span class={scope === 'public' ? undefined : 'muted'}>{scopeLabel(scope)}</span>;
  return (
    <ul class="chips chips-compact" aria-label="Only these ranges and hosts">
      {scope.map((e) => (
        <li key={e} class="chip">
          <code>{e}</code>
        </li>
      ))}
    </ul>
  );
}
