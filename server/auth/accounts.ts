import crypto from 'node:crypto';

import { type Account, type AccountCreate, type AccountUpdate, type Plan,PLANS } from '../contract/admin.js';
import type { Filled } from '../contract/validate.js';
import { NotFoundError, ValidationError } from '../domain-errors.js';
import { canonicalScope, DEFAULT_NETWORK_SCOPE } from '../egress/network-scope.js';
import type { AccountRecord } from '../store/records/account-record.js';
import { type AccountStore, EmailTakenError } from '../store/stores.js';
import { type Clock,formatIsoSeconds } from '../time.js';

export { type Plan,PLANS };

/** How long a rotated-out webhook secret keeps signing beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** `whsec_` and base64 of 32 random bytes, the Standard Webhooks secret form. */
export const generateWebhookSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

const EMAIL = /^[^\s@]+@[^\s@]+$/;
/**
 * Control characters and invisible format characters (bidirectional overrides and isolates,
 * zero-width characters): an address holding them can be shown in the panel as another.
 */
const HIDDEN_CHARACTERS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** The stored form of an address the schema accepted: what a schema cannot say about an e-mail. */
function canonicalEmail(email: string): string {
  if (!EMAIL.test(email.trim())) throw new ValidationError('email must be an e-mail address', 'email');
  if (HIDDEN_CHARACTERS.test(email)) {
    throw new ValidationError('email must not contain control characters or invisible formatting characters (such as bidirectional overrides)', 'email');
  }
  return email.trim().toLowerCase();
}

/** The 400 for an address another account took between the check and the write (another request, or another node). */
const emailInUse =
  (email: string) =>
  (err: unknown): never => {
    if (err instanceof EmailTakenError) throw new ValidationError(`email ${email} already has an account`, 'email');
    throw err;
  };

/** Accounts: e-mail, verification, plan, limits and the webhook signing secret. */
export class AccountService {
  constructor(
    private readonly store: AccountStore,
    private readonly clock: Clock,
    private readonly defaults: { dailyLimit: number; monthlyLimit: number },
  ) {}

  /** A new account from a body the AccountCreate schema accepted, with its defaults filled in. */
  async create(input: Filled<AccountCreate, 'plan' | 'email_verified'>): Promise<AccountRecord> {
    const email = canonicalEmail(input.email);
    if (await this.store.byEmail(email)) {
      throw new ValidationError(`email ${email} already has an account`, 'email');
    }
    return this.store
      .insert({
        email,
        email_verified: input.email_verified,
        plan: input.plan,
        daily_limit: input.daily_limit ?? this.defaults.dailyLimit,
        monthly_limit: input.monthly_limit ?? this.defaults.monthlyLimit,
        default_network_scope: canonicalScope(input.default_network_scope ?? DEFAULT_NETWORK_SCOPE),
        created_at: this.clock.now(),
        webhook_secret: generateWebhookSecret(),
      })
      .catch(emailInUse(email));
  }

  async list(): Promise<AccountRecord[]> {
    return this.store.list();
  }

  async find(id: string): Promise<AccountRecord | null> {
    return this.store.get(id);
  }

  async get(id: string): Promise<AccountRecord> {
    const account = await this.find(id);
    if (!account) throw new NotFoundError('account', id);
    return account;
  }

  /** Changes an account from a body the AccountUpdate schema accepted. */
  async update(id: string, input: AccountUpdate): Promise<AccountRecord> {
    const fields: Partial<AccountRecord> = { ...input };
    if (input.email !== undefined) fields.email = canonicalEmail(input.email);
    if (input.default_network_scope !== undefined) fields.default_network_scope = canonicalScope(input.default_network_scope);
    const current = await this.get(id);
    if (fields.email && fields.email !== current.email && (await this.store.byEmail(fields.email))) {
      throw new ValidationError(`email ${fields.email} already has an account`);
    }
    await this.store.update(id, fields).catch(emailInUse(fields.email ?? current.email));
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    await this.get(id);
    await this.store.remove(id);
  }

  async webhookSecret(id: string): Promise<string> {
    return (await this.get(id)).webhook_secret;
  }

  async rotateWebhookSecret(id: string): Promise<string> {
    const account = await this.get(id);
    const secret = generateWebhookSecret();
    await this.store.update(id, {
      webhook_secret: secret,
      previous_webhook_secret: account.webhook_secret,
      previous_webhook_secret_until: this.clock.now() + SECRET_OVERLAP_MS,
    });
    return secret;
  }

  /** The secrets a webhook is signed with: the current one, and the previous one for 24 h after a rotation. */
  async signingSecrets(id: string): Promise<string[]> {
    const account = await this.find(id);
    if (!account) return [];
    const secrets = [account.webhook_secret];
    if (account.previous_webhook_secret && (account.previous_webhook_secret_until ?? 0) > this.clock.now()) {
      secrets.push(account.previous_webhook_secret);
    }
    return secrets;
  }
}

/** The admin API's view of an account (never the secret). */
export function accountView(account: AccountRecord, usage: { today: number; month: number }): Account {
  return {
    id: account._id,
    email: account.email,
    email_verified: account.email_verified,
    plan: account.plan,
    daily_limit: account.daily_limit,
    monthly_limit: account.monthly_limit,
    default_network_scope: account.default_network_scope ?? DEFAULT_NETWORK_SCOPE,
    created_at: formatIsoSeconds(account.created_at),
    calls_today: usage.today,
    calls_this_month: usage.month,
  };
}
