import type { NetworkScope, Plan } from '../../contract/admin.js';

/** An account as the stores keep it; times are epoch milliseconds. */
export interface AccountRecord {
  _id: string;
  email: string;
  email_verified: boolean;
  plan: Plan;
  daily_limit: number;
  monthly_limit: number;
  created_at: number;
  webhook_secret: string;
  /** The network scope given to the account's new keys; absent on accounts made before scopes ("lan"). */
  default_network_scope?: NetworkScope;
  previous_webhook_secret?: string;
  previous_webhook_secret_until?: number;
}
