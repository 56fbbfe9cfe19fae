import { useState } from 'preact/hooks';

import type { Account } from '../admin-types.js';
import { api } from '../api-client.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { EmptyState } from '../components/empty-state.js';
import { LoadError } from '../components/load-error.js';
import { useToast } from '../components/toasts.js';
import { formatAbsolute, formatRelative } from '../format-time.js';
import { routeHref } from '../hash-route.js';
import { noApiAccessReason, PLANS } from '../plans.js';
import { useResource } from '../use-resource.js';
import { AccountFormDialog } from './account-form-dialog.js';
import { PageHeader } from './page-header.js';
import { StorageDestinationDialog } from './storage-destination-dialog.js';
import { WebhookSecretDialog } from './webhook-secret-dialog.js';

type Open =
  | { kind: 'create' }
  | { kind: 'edit'; account: Account }
  | { kind: 'secret'; account: Account }
  | { kind: 'storage'; account: Account }
  | { kind: 'delete'; account: Account }
  | null;

export function AccountsPage() {
  const notify = useToast();
  const accounts = useResource((signal) => api<{ accounts: Account[] }>('/admin/api/accounts', { signal }).then((r) => r.accounts), []);
  const [open, setOpen] = useState<Open>(null);
  const close = () => setOpen(null);

  const replace = (updated: Account) => accounts.setData((list) => list?.map((a) => (a.id === updated.id ? updated : a)));

  const toggleVerified = async (account: Account, verified: boolean) => {
    replace({ ...account, email_verified: verified });
    try {
      replace(await api<Account>(`/admin/api/accounts/${account.id}`, { method: 'PATCH', body: { email_verified: verified } }));
      notify(verified ? `${account.email} is marked verified.` : `${account.email} is marked not verified; its keys get 403 until it is verified.`);
    } catch (err) {
      replace(account);
      notify(err instanceof Error ? err.message : String(err), 'error');
    }
  };

  const list = accounts.data;
  return (
    <>
      <PageHeader title="Accounts" intro="Who may use the API, on which plan, and how much.">
        <button type="button" class="button primary" onClick={() => setOpen({ kind: 'create' })}>
          New account
        </button>
      </PageHeader>
      {accounts.error && !list && <LoadError error={accounts.error} onRetry={accounts.reload} />}
      {!list && !accounts.error && <p class="loading">Loading…</p>}
      {list && list.length === 0 && (
        <EmptyState title="No accounts yet">
          <p>An account holds API keys, limits and the webhook secret. Create one to hand out the first key.</p>
          <button type="button" class="button primary" onClick={() => setOpen({ kind: 'create' })}>
            Create the first account
          </button>
        </EmptyState>
      )}
      {list && list.length > 0 && (
        <div class="table-wrap">
          <table class="table table-cards">
            <caption class="visually-hidden">Accounts</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Verified</th>
                <th scope="col">Plan</th>
                <th scope="col" class="num">
                  Today
                </th>
                <th scope="col" class="num">
                  This month
                </th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((a) => (
                <tr key={a.id}>
                  <th scope="row" class="cell-main">
                    {a.email}
                  </th>
                  <td data-label="Verified">
                    <label class="switch">
                      <input
                        type="checkbox"
                        role="switch"
                        checked={a.email_verified}
                        aria-label={`E-mail verified for ${a.email}`}
                        onChange={(e) => toggleVerified(a, e.currentTarget.checked)}
                      />
                      <span class="switch-track" aria-hidden="true" />
                    </label>
                  </td>
                  <td data-label="Plan">
                    <div class="plan">
                      <span class={PLANS[a.plan].apiAccess ? 'badge badge-completed' : 'badge'}>{PLANS[a.plan].label}</span>
                      {!PLANS[a.plan].apiAccess && <span class="plan-note">{noApiAccessReason(a.plan)}</span>}
                    </div>
                  </td>
                  <td class="num" data-label="Today">
                    <Usage used={a.calls_today} limit={a.daily_limit} />
                  </td>
                  <td class="num" data-label="This month">
                    <Usage used={a.calls_this_month} limit={a.monthly_limit} />
                  </td>
                  <td data-label="Created">
                    <time dateTime={a.created_at} title={formatAbsolute(a.created_at)}>
                      {formatRelative(a.created_at)}
                    </time>
                  </td>
                  <td class="actions actions-wrap">
                    <a class="button small" href={routeHref('keys', { account: a.id })} aria-label={`API keys of ${a.email}`}>
                      Keys
                    </a>
                    <button type="button" class="button small" aria-label={`Edit ${a.email}`} onClick={() => setOpen({ kind: 'edit', account: a })}>
                      Edit
                    </button>
                    <button type="button" class="button small" aria-label={`Webhook secret of ${a.email}`} onClick={() => setOpen({ kind: 'secret', account: a })}>
                      Webhook secret
                    </button>
                    <button type="button" class="button small" aria-label={`Storage destination of ${a.email}`} onClick={() => setOpen({ kind: 'storage', account: a })}>
                      Storage
                    </button>
                    <button type="button" class="button small danger-text" aria-label={`Delete ${a.email}`} onClick={() => setOpen({ kind: 'delete', account: a })}>
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
        <AccountFormDialog
          onClose={close}
          onSaved={(account) => {
            accounts.setData((l) => [...(l ?? []), account]);
            notify(`Account ${account.email} created.`);
            close();
          }}
        />
      )}
      {open?.kind === 'edit' && (
        <AccountFormDialog
          account={open.account}
          onClose={close}
          onSaved={(account) => {
            replace(account);
            notify(`Account ${account.email} saved.`);
            close();
          }}
        />
      )}
      {open?.kind === 'secret' && <WebhookSecretDialog account={open.account} onClose={close} />}
      {open?.kind === 'storage' && <StorageDestinationDialog account={open.account} onClose={close} onChanged={(message) => notify(message)} />}
      {open?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete this account?"
          confirmLabel="Delete account"
          onClose={close}
          onConfirm={async () => {
            await api<void>(`/admin/api/accounts/${open.account.id}`, { method: 'DELETE' });
            accounts.setData((l) => l?.filter((a) => a.id !== open.account.id));
            notify(`Account ${open.account.email} deleted.`);
          }}
        >
          <p>
            <strong>{open.account.email}</strong> and all its API keys stop working at once. Its job history stays.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

function Usage({ used, limit }: { used: number; limit: number }) {
  const near = limit > 0 && used / limit >= 0.9;
  return (
    <span class={near ? 'bad' : undefined}>
      {used.toLocaleString()} <span class="muted">/ {limit.toLocaleString()}</span>
    </span>
  );
}
