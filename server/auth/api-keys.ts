import crypto from 'node:crypto';

import type { ApiKey, ApiKeyCreate, ApiKeyUpdate } from '../contract/admin.js';
import type { Filled } from '../contract/validate.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { NotFoundError, ValidationError } from '../domain-errors.js';
import { canonicalScope, DEFAULT_NETWORK_SCOPE, type NetworkScope } from '../egress/network-scope.js';
import { canonicalWhitelist } from '../ip-whitelist.js';
import type { AccountRecord } from '../store/records/account-record.js';
import type { KeyRecord } from '../store/records/key-record.js';
import type { KeyStore } from '../store/stores.js';
import { type Clock,formatIsoSeconds } from '../time.js';

const KEY_PREFIX = 'sa_';
/** Render-link signing secrets: `sas_` and 32 random bytes in base64url. */
const SIGNING_SECRET_PREFIX = 'sas_';
const newSigningSecret = () => SIGNING_SECRET_PREFIX + crypto.randomBytes(32).toString('base64url');
const PREFIX_LENGTH = 9;
/** last_used_at is written at most this often per key, so reads stay cheap under load. */
const TOUCH_INTERVAL_MS = 60_000;

const hashKey = (key: string) => crypto.createHash('sha256').update(key).digest();

/** A name the schema accepted, trimmed; only blanks is no name. */
function keyName(name: string): string {
  if (name.trim().length === 0) throw new ValidationError('name must be a text of 1 to 100 characters', 'name');
  return name.trim();
}

/**
 * API keys: `sa_` followed by 32 random bytes in base64url (256 bits). Only the SHA-256 of
 * a key is stored; the key is returned once, at creation.
 */
export class ApiKeyService {
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly store: KeyStore,
    private readonly clock: Clock,
    private readonly box: SecretBox,
  ) {}

  /**
   * A new key from a body the ApiKeyCreate schema accepted, with its defaults filled in, and
   * its render-link signing secret. Both are returned this once.
   */
  async create(
    account: AccountRecord,
    input: Filled<ApiKeyCreate, 'name' | 'ip_whitelist'>,
  ): Promise<{ key: string; signingSecret: string; record: KeyRecord }> {
    const name = keyName(input.name);
    const ip_whitelist = canonicalWhitelist(input.ip_whitelist);
    const network_scope = canonicalScope(input.network_scope ?? account.default_network_scope ?? DEFAULT_NETWORK_SCOPE);
    const key = KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
    const signingSecret = newSigningSecret();
    const record = await this.store.insert({
      account_id: account._id,
      name,
      hash: hashKey(key).toString('hex'),
      prefix: key.slice(0, PREFIX_LENGTH),
      ip_whitelist,
      network_scope,
      created_at: this.clock.now(),
      last_used_at: null,
      revoked: false,
      sealed_signing_secret: this.box.seal(signingSecret),
    });
    return { key, signingSecret, record };
  }

  /** Replaces a key's signing secret: every render link signed with the old one stops working. */
  async rotateSigningSecret(id: string): Promise<string> {
    const current = await this.get(id);
    if (current.revoked) throw new ValidationError('a revoked key signs no render links; create a new key', 'revoked');
    const signingSecret = newSigningSecret();
    await this.store.update(id, { sealed_signing_secret: this.box.seal(signingSecret) });
    return signingSecret;
  }

  /**
   * The live key and its signing secret for a render link's `key_id`, or null when there is no
   * such key or it is revoked; `secret` is null for a key that has none yet (made before render
   * links, or its secret was sealed under another data directory's key).
   */
  async forRenderLink(id: string): Promise<{ record: KeyRecord; secret: string | null } | null> {
    if (typeof id !== 'string' || id.length === 0 || id.length > 64) return null;
    const record = await this.store.get(id);
    if (!record || record.revoked) return null;
    return { record, secret: this.signingSecretOf(record) };
  }

  private signingSecretOf(record: KeyRecord): string | null {
    if (!record.sealed_signing_secret) return null;
    try {
      return this.box.open<string>(record.sealed_signing_secret);
    } catch {
      return null;
    }
  }

  async list(accountId: string): Promise<KeyRecord[]> {
    return this.store.byAccount(accountId);
  }

  async get(id: string): Promise<KeyRecord> {
    const record = await this.store.get(id);
    if (!record) throw new NotFoundError('API key', id);
    return record;
  }

  /** Changes a key from a body the ApiKeyUpdate schema accepted. */
  async update(id: string, input: ApiKeyUpdate): Promise<KeyRecord> {
    const current = await this.get(id);
    const set: Partial<KeyRecord> = {};
    if (input.name !== undefined) set.name = keyName(input.name);
    if (input.ip_whitelist !== undefined) set.ip_whitelist = canonicalWhitelist(input.ip_whitelist);
    if (input.network_scope !== undefined) set.network_scope = canonicalScope(input.network_scope);
    if (input.revoked !== undefined) {
      if (current.revoked && !input.revoked) throw new ValidationError('revoked: a revoked key cannot be restored; create a new one', 'revoked');
      set.revoked = input.revoked;
    }
    await this.store.update(id, set);
    return this.get(id);
  }

  /** Where a key's captures and webhooks may connect; a key deleted since is held to "public". */
  async networkScope(id: string): Promise<NetworkScope> {
    const record = await this.store.get(id);
    return record ? (record.network_scope ?? DEFAULT_NETWORK_SCOPE) : 'public';
  }

  async remove(id: string): Promise<void> {
    await this.get(id);
    await this.store.remove(id);
  }

  async revokeAll(accountId: string): Promise<void> {
    await this.store.revokeAll(accountId);
  }

  /**
   * The live key record for a presented key, or null. The stored hash is compared in
   * constant time, so the comparison leaks nothing about how much of a key matched.
   */
  async authenticate(presented: string): Promise<KeyRecord | null> {
    if (!presented.startsWith(KEY_PREFIX) || presented.length > 200) return null;
    const digest = hashKey(presented);
    const matches = await this.store.byHash(digest.toString('hex'));
    // Two records with one hash (a damaged keys.db, see openStores) cannot tell whose key it is.
    if (matches.length !== 1) return null;
    const record = matches[0];
    if (!crypto.timingSafeEqual(Buffer.from(record.hash, 'hex'), digest)) return null;
    return record.revoked ? null : record;
  }

  /** Records that a key was used (throttled). */
  async touch(record: KeyRecord): Promise<void> {
    const now = this.clock.now();
    if (now - (this.touched.get(record._id) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.touched.set(record._id, now);
    await this.store.update(record._id, { last_used_at: now });
  }
}

/** The admin API's view of a key (never the hash). */
export function keyView(record: KeyRecord): ApiKey {
  return {
    id: record._id,
    account_id: record.account_id,
    name: record.name,
    prefix: record.prefix,
    ip_whitelist: record.ip_whitelist,
    network_scope: record.network_scope ?? DEFAULT_NETWORK_SCOPE,
    created_at: formatIsoSeconds(record.created_at),
    last_used_at: record.last_used_at === null ? null : formatIsoSeconds(record.last_used_at),
    revoked: record.revoked,
    has_signing_secret: record.sealed_signing_secret !== undefined,
  };
}
