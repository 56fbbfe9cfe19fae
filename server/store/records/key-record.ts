import type { NetworkScope } from '../../contract/admin.js';

/** An API key as the stores keep it; times are epoch milliseconds. */
export interface KeyRecord {
  _id: string;
  account_id: string;
  name: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  hash: string;
  prefix: string;
  ip_whitelist: string[];
  /** Where the key's captures and webhooks may connect (egress/network-scope.ts); absent on keys made before scopes ("lan"). */
  network_scope?: NetworkScope;
  created_at: number;
  last_used_at: number | null;
  revoked: boolean;
  /**
   * The key's render-link signing secret, sealed (SecretBox): the service must read it back to
   * check signatures, so it cannot be hashed like the key. Absent on keys made before render links.
   */
  sealed_signing_secret?: string;
}
