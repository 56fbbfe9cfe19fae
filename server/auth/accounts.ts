import crypto from 'node:crypto';
import { notFound, ValidationError } from '../errors.js';
import type { Store } from '../store/datastores.js';
import { formatIsoSeconds, type Clock } from '../time.js';

export type Plan = 'super_user' | 'basic';
export const PLANS: readonly Plan[] = ['super_user', 'basic'];

export interface AccountRecord {
  _id: string;
  email: string;
  email_verified: boolean;
  plan: Plan;
  daily_limit: number;
  monthly_limit: number;
  created_at: number;
  webhook_secret: string;
  previous_webhook_secret?: string;
  previous_webhook_secret_until?: number;
}

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

export interface AccountInput {
  email?: unknown;
  email_verified?: unknown;
  plan?: unknown;
  daily_limit?: unknown;
  monthly_limit?: unknown;
}

function validate(input: AccountInput, creating: boolean): Partial<AccountRecord> {
  const known = new Set(['email', 'email_verified', 'plan', 'daily_limit', 'monthly_limit']);
  const unknown = Object.keys(input).filter((k) => !known.has(k));
  if (unknown.length) throw new ValidationError(`Unknown field(s): ${unknown.join(', ')}`);
  const out: Partial<AccountRecord> = {};
  if (input.email !== undefined || creating) {
    if (typeof input.email !== 'string' || !EMAIL.test(input.email.trim()) || input.email.length > 254) {
      throw new ValidationError('email must be an e-mail address');
    }
    if (HIDDEN_CHARACTERS.test(input.email)) {
      throw new ValidationError('email must not contain control characters or invisible formatting characters (such as bidirectional overrides)');
    }
    out.email = input.email.trim().toLowerCase();
  }
  if (input.email_verified !== undefined) {
    if (typeof input.email_verified !== 'boolean') throw new ValidationError('email_verified must be true or false');
    out.email_verified = input.email_verified;
  }
  if (input.plan !== undefined) {
    if (!PLANS.includes(input.plan as Plan)) throw new ValidationError(`plan must be one of ${PLANS.join(', ')}`);
    out.plan = input.plan as Plan;
  }
  for (const field of ['daily_limit', 'monthly_limit'] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 100_000_000) {
      throw new ValidationError(`${field} must be a whole number from 0 to 100000000`);
    }
    out[field] = v;
  }
  return out;
}

/** Accounts: e-mail, verification, plan, limits and the webhook signing secret. */
export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly defaults: { dailyLimit: number; monthlyLimit: number },
  ) {}

  async create(input: AccountInput): Promise<AccountRecord> {
    const fields = validate(input, true);
    if (await this.store.findOne({ email: fields.email })) {
      throw new ValidationError(`email ${fields.email} already has an account`);
    }
    return (await this.store.insert({
      email: fields.email,
      email_verified: fields.email_verified ?? false,
      plan: fields.plan ?? 'super_user',
      daily_limit: fields.daily_limit ?? this.defaults.dailyLimit,
      monthly_limit: fields.monthly_limit ?? this.defaults.monthlyLimit,
      created_at: this.clock.now(),
      webhook_secret: generateWebhookSecret(),
    })) as AccountRecord;
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.store.find({}).sort({ created_at: 1 })) as AccountRecord[];
  }

  async find(id: string): Promise<AccountRecord | null> {
    return (await this.store.findOne({ _id: id })) as AccountRecord | null;
  }

  async get(id: string): Promise<AccountRecord> {
    const account = await this.find(id);
    if (!account) throw notFound(`No account ${id}`);
    return account;
  }

  async update(id: string, input: AccountInput): Promise<AccountRecord> {
    const fields = validate(input, false);
    const current = await this.get(id);
    if (fields.email && fields.email !== current.email && (await this.store.findOne({ email: fields.email }))) {
      throw new ValidationError(`email ${fields.email} already has an account`);
    }
    await this.store.update({ _id: id }, { $set: fields });
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    await this.get(id);
    await this.store.remove({ _id: id }, {});
  }

  async webhookSecret(id: string): Promise<string> {
    return (await this.get(id)).webhook_secret;
  }

  async rotateWebhookSecret(id: string): Promise<string> {
    const account = await this.get(id);
    const secret = generateWebhookSecret();
    await this.store.update(
      { _id: id },
      {
        $set: {
          webhook_secret: secret,
          previous_webhook_secret: account.webhook_secret,
          previous_webhook_secret_until: this.clock.now() + SECRET_OVERLAP_MS,
        },
      },
    );
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
export function accountView(account: AccountRecord, usage: { today: number; month: number }) {
  return {
    id: account._id,
    email: account.email,
    email_verified: account.email_verified,
    plan: account.plan,
    daily_limit: account.daily_limit,
    monthly_limit: account.monthly_limit,
    created_at: formatIsoSeconds(account.created_at),
    calls_today: usage.today,
    calls_this_month: usage.month,
  };
}
