import { useState } from 'preact/hooks';

import type { Account, Plan } from '../admin-types.js';
import { api } from '../api-client.js';
import { CheckboxField, SelectField, TextField } from '../components/fields.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { NetworkScopeField, useNetworkScope } from '../components/network-scope-field.js';
import { routeApiError } from '../field-errors.js';
import { noApiAccessReason, type PlanInfo, PLANS } from '../plans.js';

// network_scope: the server names a wrong scope entry so, whichever field holds it.
const FIELDS = ['email', 'email_verified', 'plan', 'daily_limit', 'monthly_limit', 'default_network_scope', 'network_scope'] as const;
type FieldName = (typeof FIELDS)[number];

const PLAN_OPTIONS = (Object.entries(PLANS) as [Plan, PlanInfo][]).map(([value, info]) => ({
  value,
  label: `${info.label} — ${info.apiAccess ? 'may use the API' : 'API calls get 403'}`,
}));

/** A limit typed by the admin: blank means the server default; otherwise a whole number ≥ 0. */
function parseLimit(text: string): number | undefined | 'invalid' {
  const t = text.trim();
  if (t === '') return undefined;
  return /^\d+$/.test(t) ? Number(t) : 'invalid';
}

export function AccountFormDialog({ account, onClose, onSaved }: { account?: Account; onClose: () => void; onSaved: (a: Account) => void }) {
  const [email, setEmail] = useState(account?.email ?? '');
  const [verified, setVerified] = useState(account?.email_verified ?? false);
  const [plan, setPlan] = useState<Plan>(account?.plan ?? 'super_user');
  const [daily, setDaily] = useState(account ? String(account.daily_limit) : '');
  const [monthly, setMonthly] = useState(account ? String(account.monthly_limit) : '');
  const scope = useNetworkScope(account?.default_network_scope ?? 'lan');
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: typeof errors = {};
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) found.email = 'Enter an e-mail address such as ops@example.com.';
    const dailyLimit = parseLimit(daily);
    const monthlyLimit = parseLimit(monthly);
    if (dailyLimit === 'invalid') found.daily_limit = 'Enter a whole number, or leave it empty for the default.';
    if (monthlyLimit === 'invalid') found.monthly_limit = 'Enter a whole number, or leave it empty for the default.';
    const defaultScope = scope.commit();
    setErrors(found);
    if (Object.keys(found).length > 0 || !defaultScope) return;
    const body = {
      email: email.trim(),
      email_verified: verified,
      plan,
      ...(dailyLimit !== undefined && dailyLimit !== 'invalid' ? { daily_limit: dailyLimit } : {}),
      ...(monthlyLimit !== undefined && monthlyLimit !== 'invalid' ? { monthly_limit: monthlyLimit } : {}),
      default_network_scope: defaultScope,
    };
    setBusy(true);
    try {
      const saved = account
        ? await api<Account>(`/admin/api/accounts/${account.id}`, { method: 'PATCH', body })
        : await api<Account>('/admin/api/accounts', { method: 'POST', body });
      onSaved(saved);
    } catch (err) {
      const { field, message } = routeApiError(err, FIELDS);
      if (field === 'default_network_scope' || field === 'network_scope') scope.setError(message);
      else setErrors({ [field ?? 'form']: message });
      setBusy(false);
    }
  };

  return (
    <Modal title={account ? `Edit ${account.email}` : 'New account'} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate>
        <TextField label="E-mail" type="email" value={email} onInput={setEmail} error={errors.email} required autoFocus autoComplete="email" />
        <CheckboxField
          label="E-mail address verified"
          checked={verified}
          onChange={setVerified}
          error={errors.email_verified}
          hint="Keys of an unverified account get 403 “Email not verified”."
        />
        <SelectField
          label="Plan"
          value={plan}
          onChange={setPlan}
          options={PLAN_OPTIONS}
          error={errors.plan}
          hint={PLANS[plan].apiAccess ? 'Its keys may call the API, within the limits below.' : noApiAccessReason(plan)}
        />
        <div class="field-row">
          <TextField
            label="Daily limit"
            type="number"
            min={0}
            value={daily}
            onInput={setDaily}
            error={errors.daily_limit}
            placeholder="1000"
            hint="Screenshots per UTC day. Empty: the default."
          />
          <TextField
            label="Monthly limit"
            type="number"
            min={0}
            value={monthly}
            onInput={setMonthly}
            error={errors.monthly_limit}
            placeholder="30000"
            hint="Screenshots per calendar month. Empty: the default."
          />
        </div>
        <NetworkScopeField
          state={scope}
          label="Network scope of new keys"
          hint="Where the account’s new keys may connect. Existing keys keep theirs; change a key’s own on the API keys page."
        />
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel={account ? 'Save' : 'Create account'} busyLabel="Saving…" />
      </form>
    </Modal>
  );
}
